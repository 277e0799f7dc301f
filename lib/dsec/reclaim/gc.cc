#include "dsec/reclaim/gc.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include "dsec/cgroup/cgroup.h"
#include "dsec/layer/gc.h"
#include "dsec/mount/layers.h"
#include "dsec/net/egress.h"
#include "dsec/sandbox/network.h"
#include "dsec/sandbox/pool.h"
#include "dsec/sandbox/sandbox.h"
#include "dsec/sandbox/shared_memory.h"
#include "dsec/sandbox/standby.h"

namespace dsec::reclaim {

const char* verdict_name(Verdict v) {
    switch (v) {
        case Verdict::keep: return "keep";
        case Verdict::young: return "young";
        case Verdict::dead_init: return "dead_init";
        case Verdict::half_created: return "half_created";
        case Verdict::half_destroyed: return "half_destroyed";
        case Verdict::broken: return "broken";
    }
    return "?";
}

Verdict judge(std::optional<sandbox::Lifecycle> state, bool unparsable, bool init_alive, int64_t age,
              int64_t grace_s) {
    if (!state) {
        // create makes the directory, then the state file: give it time, then it is debris.
        if (age < grace_s) return Verdict::young;
        return unparsable ? Verdict::broken : Verdict::half_created;
    }
    using sandbox::Lifecycle;
    // The lock was free: nobody is creating or destroying it any more.
    if (*state == Lifecycle::creating) return Verdict::half_created;
    if (*state == Lifecycle::destroying) return Verdict::half_destroyed;
    if (*state == Lifecycle::running) return init_alive ? Verdict::keep : Verdict::dead_init;
    return age < grace_s ? Verdict::young : Verdict::broken;
}

namespace {
// What the pass learns and shares between its steps.
struct Pass {
    sandbox::Paths paths;
    const GcOptions& o;
    const Report& report;
    int64_t now = sandbox::now_unix();
    std::set<std::string> ids;       // sandboxes with a state directory (after step 1)
    std::set<std::string> rootfs;    // uppers' ids named by a state
    std::set<std::string> digests;   // layers named by a state
    bool pending_upper = false;      // an upper within its grace period exists

    // Reports one item and, unless dry_run, removes it; a failed removal is a problem.
    Status act(const std::string& kind, const std::string& id, const std::string& path, json extra,
               const std::function<Status()>& remove) {
        if (!o.dry_run)
            if (auto r = remove(); !r) {
                report.problem(std::move(r.error()).context("gc " + kind));
                return {};
            }
        json e = event("gc", id);
        e["kind"] = kind;
        e["path"] = path;
        e["dry_run"] = o.dry_run;
        e.update(extra);
        return report.event(std::move(e));
    }
};

Status as_status(Result<json> r) { return r ? Status{} : Status(fail(r.error())); }

// In a live sandbox (its lock held): a standby init or an upper that a killed reset
// left (sandbox/standby.h), removed as it is found.
Status standbys(Pass& p, const std::string& id, const sandbox::State& state) {
    auto cg = sandbox::cgroup_of(p.paths, id);
    auto found = cg ? sandbox::sweep_standbys(p.paths, state, *cg, p.o.dry_run) : Result<json>(fail(cg.error()));
    if (!found) {
        p.report.problem(std::move(found.error()).context("gc standby"));
        return {};
    }
    for (auto& item : *found)
        if (auto r = p.act(item.value("kind", ""), id, item.value("path", ""), json::object(), [] { return Status{}; }); !r)
            return r;
    return {};
}

// Step 0: pool entries whose process died (a run killed between drawing a sandbox and its
// teardown, a fill killed half-way) and pooled sandboxes whose init died: their
// sandboxes are destroyed (sandbox/pool.h).
Status pools(Pass& p) {
    namespace pool = sandbox::pool;
    auto keys = pool::keys(p.paths);
    if (!keys) {
        p.report.problem(std::move(keys.error()).context("gc pools"));
        return {};
    }
    for (auto& key : *keys) {
        auto at = pool::at(p.paths, key);
        std::vector<std::string> found;
        if (p.o.dry_run) {
            if (auto c = pool::census(at); c) found = c->stale;
        } else if (auto swept = pool::sweep(p.paths, at); swept) {
            found = *swept;
        } else if (swept.error().code != Code::not_found) {
            p.report.problem(std::move(swept.error()).context("gc pool " + key));
        }
        for (auto& id : found)
            if (auto r = p.act("pool_stale", id, at.dir, {{"pool", key}}, [] { return Status{}; }); !r) return r;
    }
    return {};
}

// Step 1: sandboxes whose init died, or whose create or destroy never finished.
Status sandboxes(Pass& p) {
    for (auto& id : sandbox::list_ids(p.paths)) {
        if (!sandbox::check_id(id)) continue;
        auto held = fs::try_lock(p.paths.state_dir(id) + "/lock");
        if (!held) {
            // busy: a create, destroy or gc at work; ENOENT: destroyed meanwhile.
            if (held.error().code != Code::busy && held.error().err != ENOENT) p.report.problem(held.error());
            continue;
        }
        auto state = sandbox::load(p.paths, id);
        std::optional<sandbox::Lifecycle> st;
        if (state) st = state->lifecycle;
        bool unparsable = !state && state.error().code == Code::bad_input;
        Verdict v = judge(st, unparsable, state && sandbox::init_alive(*state), age_s(p.paths.state_dir(id), p.now),
                          p.o.grace_s);
        if (v == Verdict::keep && state)
            if (auto r = standbys(p, id, *state); !r) return r;
        // destroy() takes the lock itself (a second flock in one process would wait on this one).
        held = fs::Lock();
        if (v == Verdict::keep || v == Verdict::young) continue;
        json extra = {{"state", st ? std::string(sandbox::lifecycle_name(*st)) : ""}};
        if (auto r = p.act(verdict_name(v), id, p.paths.state_dir(id), extra,
                           [&] { return as_status(sandbox::destroy(p.paths, id, sandbox::Missing::ok)); });
            !r)
            return r;
    }
    // What the survivors (and the ones left for the next pass) still name.
    for (auto& id : sandbox::list_ids(p.paths)) {
        p.ids.insert(id);
        auto state = sandbox::load(p.paths, id);
        if (!state) continue;
        if (auto rootfs = state->rootfs_id(); !rootfs.empty()) p.rootfs.insert(rootfs);
        for (auto& digest : state->layer_digests()) p.digests.insert(digest);
    }
    return {};
}

bool is_dir(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Step 2: cgroups without a sandbox (killing what still runs in them), then the parent
// group once no sandbox is left.
Status cgroups(Pass& p) {
    auto layout = cgroup::detect();
    if (!layout) {
        p.report.problem(layout.error());
        return {};
    }
    std::string parent = p.paths.cgroup_parent();
    std::set<std::string> parents, done;
    // With a shared memory cgroup on v2, sandboxes' groups nest in the shared one.
    cgroup::Cgroup any(*layout, parent, "x"), any_shared(*layout, parent, "x", cgroup::Memcg::shared);
    for (auto* cg : {&any, &any_shared}) {
        for (auto& d : cg->dirs()) parents.insert(fs::dirname(d));
        for (auto& d : cg->unused_dirs()) parents.insert(fs::dirname(d));  // an older dsec's
    }
    for (auto& dir : parents) {
        auto names = fs::list_dir(dir);
        if (!names) continue;
        bool nested = dir == any_shared.shared_dir();
        for (auto& name : *names) {
            // The shared memory group is no sandbox's: removed below once unused.
            if (name == cgroup::kSharedMemoryGroup) continue;
            if (done.count(name) || p.ids.count(name) || !is_dir(dir + "/" + name)) continue;
            // Re-checked at the last moment: create makes the state directory first.
            if (fs::exists(p.paths.state_dir(name))) continue;
            done.insert(name);
            cgroup::Cgroup cg(*layout, parent, name, nested ? cgroup::Memcg::shared : cgroup::Memcg::own);
            json extra = {{"processes", cg.pids().size()}};
            if (auto r = p.act("orphan_cgroup", name, dir + "/" + name, extra, [&] { return cg.remove(); }); !r)
                return r;
        }
    }
    // The shared memory group once no process (v1) or sandbox group (v2) is left in it.
    if (!p.o.dry_run)
        if (auto gone = sandbox::remove_shared_memory_if_unused(p.paths); !gone.empty())
            if (auto r = p.act("empty_shared_memory", "", gone, json::object(), [] { return Status{}; }); !r) return r;
    if (!sandbox::list_ids(p.paths).empty()) return {};
    for (auto& dir : parents) {
        if (!is_dir(dir)) continue;
        // rmdir fails on a parent that holds a group (a create that just began): left alone.
        if (!p.o.dry_run && ::rmdir(dir.c_str()) < 0) continue;
        if (auto r = p.act("empty_cgroup_parent", "", dir, json::object(), [] { return Status{}; }); !r) return r;
    }
    return {};
}

// Step 3: host id ranges whose sandbox is gone, under the pool's lock (claims take it too).
Status id_ranges(Pass& p) {
    std::string dir = p.paths.run + "/userns";
    if (!is_dir(dir)) return {};
    auto held = fs::lock(dir + "/.lock");
    if (!held) {
        p.report.problem(held.error());
        return {};
    }
    auto slots = fs::list_dir(dir);
    if (!slots) return fail(slots.error());
    for (auto& slot : *slots) {
        if (slot == ".lock") continue;
        std::string path = dir + "/" + slot;
        auto owner = fs::read_file(path);
        // An empty file is a claim killed before it wrote its owner (the lock we hold
        // keeps live claims out): an orphan too.
        if (!owner || (!owner->empty() && fs::exists(p.paths.state_dir(*owner)))) continue;
        json extra = {{"slot", std::strtoul(slot.c_str(), nullptr, 10)}};
        auto remove = [&]() -> Status {
            if (::unlink(path.c_str()) < 0 && errno != ENOENT) return fail(sys_error("unlink", path));
            return {};
        };
        if (auto r = p.act("orphan_idrange", *owner, path, extra, remove); !r) return r;
    }
    return {};
}

// Step 3b: egress rules pinned for a sandbox that is gone (a create or destroy killed
// between its steps; their veths went with the sandboxes' network namespaces), and once
// no sandbox has egress, the run directory's programs and NAT table.
Status egress(Pass& p) {
    for (auto& id : net::pinned_ids(p.paths.run)) {
        if (fs::exists(p.paths.state_dir(id))) continue;
        std::string path = net::pin_dir(p.paths.run, id);
        if (auto r = p.act("orphan_egress", id, path, json::object(),
                           [&] { return sandbox::stop_egress(p.paths, id, json::object()); });
            !r)
            return r;
    }
    auto unused = sandbox::drop_unused_egress(p.paths, true);
    if (!unused) {
        p.report.problem(std::move(unused.error()).context("gc unused_egress"));
        return {};
    }
    if (!*unused) return {};
    return p.act("unused_egress", "", net::shared_dir(p.paths.run), json::object(), [&]() -> Status {
        if (auto r = sandbox::drop_unused_egress(p.paths, false); !r) return fail(r.error());
        return {};
    });
}

// Step 4: upper directories no sandbox owns, once past the grace period and not under an
// overlay mounted here (`dsec-mount --at` makes uppers without a sandbox). Those a
// destroy set aside (.gone-*, sandbox/sandbox.h) wait at most kAsideGraceS since they
// were renamed (ctime), for the teardown child that removes them: no create is on its
// way to them, and their overlay, if any, is in a namespace of its own.
constexpr int64_t kAsideGraceS = 60;

Status uppers(Pass& p) {
    std::string dir = p.paths.root + "/sandboxes";
    auto names = fs::list_dir(dir);
    if (!names) return fail(names.error());
    auto mountinfo = fs::read_file("/proc/self/mountinfo");
    for (auto& name : *names) {
        if (p.ids.count(name) || p.rootfs.count(name)) continue;
        std::string path = dir + "/" + name;
        bool aside = name.rfind(".gone-", 0) == 0;
        int64_t age = age_s(path, p.now, aside ? Since::changed : Since::modified);
        if (age < (aside ? std::min(p.o.grace_s, kAsideGraceS) : p.o.grace_s)) {
            p.pending_upper = true;
            continue;
        }
        if (!aside && mountinfo && mountinfo->find("upperdir=" + path + "/") != std::string::npos) continue;
        if (auto r = p.act("orphan_upper", name, path, {{"age_s", age}}, [&] { return fs::remove_tree(path); }); !r)
            return r;
    }
    return {};
}

// When the layer was mounted: the mountpoint directory under the mount, seen through a
// clone of $DSEC_RUN/layers that has no submounts. -1 when unknown.
int64_t mount_age(const dsec::Paths& paths, const std::string& digest, int64_t now) {
    std::string layers = mount::layers_dir(paths);
    Fd tree(int(::syscall(SYS_open_tree, AT_FDCWD, layers.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)));
    if (!tree) return -1;
    std::string hex = digest.rfind("sha256:", 0) == 0 ? digest.substr(7) : digest;
    struct stat st;
    if (::fstatat(tree.get(), hex.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) return -1;
    return now - int64_t(st.st_mtim.tv_sec);
}

// Step 5: layer mounts nothing uses (see the rule in gc.h).
Status layer_mounts(Pass& p, const dsec::Paths& paths) {
    if (p.pending_upper) return {};
    auto mounted = mount::mounted_layers(paths);
    if (!mounted) {
        p.report.problem(mounted.error());
        return {};
    }
    for (auto& m : *mounted) {
        if (p.digests.count(m.digest)) continue;
        if (mount_age(paths, m.digest, p.now) < p.o.grace_s) continue;
        if (auto r = p.act("unused_layer_mount", "", m.path, {{"digest", m.digest}},
                           [&] { return mount::unmount_layer(paths, m.digest); });
            !r)
            return r;
    }
    return {};
}

// Step 6: what interrupted layer builds left in the store (dsec-layer gc's finding; the
// layers themselves are dsec-layer gc's to judge).
Status layer_temps(Pass& p, const dsec::Paths& paths) {
    layer::Store store(paths.layers());
    auto found = layer::collect_garbage(store, {}, true);
    if (!found) {
        p.report.problem(std::move(found.error()).context("layer store"));
        return {};
    }
    for (auto& g : *found) {
        std::string kind = g.value("kind", "");
        if (kind != "staging" && kind != "temp") continue;
        std::string path = g.value("path", "");
        if (auto r = p.act("layer_" + kind, "", path, json::object(), [&] { return fs::remove_tree(path); }); !r)
            return r;
    }
    return {};
}
}  // namespace

Status collect_garbage(const dsec::Paths& paths, const GcOptions& o, const Report& report) {
    Pass p{sandbox::Paths(paths), o, report};
    for (auto step : {pools, sandboxes, cgroups, id_ranges, egress, uppers})
        if (auto r = step(p); !r) return r;
    if (auto r = layer_mounts(p, paths); !r) return r;
    return layer_temps(p, paths);
}

}  // namespace dsec::reclaim
