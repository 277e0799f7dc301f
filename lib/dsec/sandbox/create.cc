#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "dsec/guard/files.h"
#include "dsec/sys/process.h"
#include "dsec/ns/idrange.h"
#include "dsec/ns/spawn.h"
#include "dsec/sandbox/core_sched.h"
#include "dsec/sandbox/disk.h"
#include "dsec/sandbox/network.h"
#include "dsec/sandbox/sandbox.h"
#include "dsec/sandbox/shared_memory.h"
#include "dsec/sandbox/start.h"
#include "dsec/sys/parse.h"

namespace dsec::sandbox {

namespace {
// A lowerdir must be a mounted layer: a bare directory means dsec-mount never ran (or
// the host rebooted), and an overlay over it would silently be empty.
Status check_mounted(const mount::Rootfs& rootfs) {
    for (auto& dir : rootfs.lowerdirs) {
        struct stat st, parent;
        if (::stat(dir.c_str(), &st) < 0 || ::stat((dir + "/..").c_str(), &parent) < 0 || st.st_dev == parent.st_dev)
            return fail(make_error(Code::not_mounted, "layer is not mounted (run dsec-mount first)", dir));
    }
    if (rootfs.lowerdirs.empty()) return fail(make_error(Code::bad_input, "rootfs has no layers", rootfs.id));
    return {};
}

// The image's config supplies defaults the options override.
json resolve_config(const mount::Rootfs& rootfs, const CreateOptions& o) {
    const json& cfg = rootfs.config.is_object() ? rootfs.config : json::object();
    std::vector<std::string> env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                    "HOME=/root"};
    auto set = [&](const std::string& kv) {
        auto key = kv.substr(0, kv.find('='));
        std::erase_if(env, [&](const std::string& e) { return e.substr(0, e.find('=')) == key; });
        env.push_back(kv);
    };
    if (cfg.contains("env") && cfg["env"].is_array())
        for (auto& e : cfg["env"])
            if (e.is_string()) set(e.get<std::string>());
    for (auto& e : o.env) set(e);
    std::string workdir = o.workdir;
    if (workdir.empty()) workdir = cfg.value("workdir", "");
    if (workdir.empty()) workdir.push_back('/');  // not = "/": g++ 12 warns falsely (-Wrestrict) on it here
    std::string user = o.user;
    if (user.empty()) {
        std::string u = cfg.value("user", "");
        // A name is looked up in the sandbox's /etc/passwd at each exec.
        user = (!u.empty() && parse::check_user(u)) ? u : "0";
    }
    return {{"env", env}, {"workdir", workdir}, {"user", user}};
}

bool sandbox_exists(const std::string& run_dir, const std::string& id) {
    return fs::exists(run_dir + "/sandboxes/" + id);
}

Result<State> build(const Paths& paths, const mount::Rootfs& rootfs, const CreateOptions& o, const std::string& id,
                    State& state) {
    if (auto r = check_mounted(rootfs); !r) return fail(r.error());
    const Security& sec = o.security;
    if (o.guard && !o.guard->network.empty())
        if (auto r = check_egress_security(sec); !r) return fail(r.error());
    ns::IdRange ids;
    if (sec.userns) {
        auto pool = ns::pool_from_env();
        if (!pool) return fail(pool.error());
        auto claimed = ns::claim_ids(paths.run, *pool, id, sandbox_exists);
        if (!claimed) return fail(claimed.error());
        ids = *claimed;
        // Saved with the rest below; if create dies before that, the slot names a sandbox
        // whose state directory destroy removes, and the next claim takes it over.
        state.extra["security"]["host_uid"] = ids.host_first;
        state.extra["security"]["ids"] = ns::kIdsPerSandbox;
        state.extra["security"]["slot"] = ids.slot;
    }
    if (auto r = install_seccomp(paths, id, sec.seccomp, o.guard ? &o.guard->syscalls : nullptr); !r)
        return fail(r.error());
    auto layout = cgroup::detect();
    if (!layout) return fail(layout.error());
    cgroup::Cgroup cg(*layout, paths.cgroup_parent(), id, o.memcg);
    cgroup::Limits limits = o.limits;
    limits.cpu_weight = cpu_weight(o.cpu_class);
    // Held until the init is in the shared memory group: no destroy removes it meanwhile.
    fs::Lock shared_memory;
    if (o.memcg == cgroup::Memcg::shared) {
        auto held = hold_shared_memory(paths);
        if (!held) return fail(held.error());
        shared_memory = std::move(*held);
    }
    // The rest while the init sets itself up (StartSpec::limits).
    if (auto r = cg.create(limits, cgroup::Cgroup::Part::early); !r) return fail(r.error());
    StartSpec spec{id, o.hostname.empty() ? id.substr(0, 63) : o.hostname, o.init_program, sec, ids, o.disk,
                   o.tmp_size, o.cpu_class, o.binds, {paths.root, paths.run, o.layer_store}, {},
                   o.init_in_process};
    spec.limits = &limits;
    if (o.while_starting && !o.guard) spec.while_starting = [&] { o.while_starting(state); };
    auto init = start(paths, rootfs, spec, cg);
    if (!init) return fail(init.error());
    // The policy's mounts, before anything runs inside (the state still says "creating").
    if (o.guard)
        if (auto r = guard::apply_file_rules(init->pid, proc::process_start(init->pid), o.guard->files, paths.run);
            !r)
            return fail(std::move(r.error()).context("applying the policy"));
    if (o.guard && !o.guard->network.empty()) {
        auto egress = start_egress(paths, id, init->pid, cg.unified_dir(), o.guard->network);
        if (!egress) return fail(std::move(egress.error()).context("applying the policy's network rules"));
        state.extra["egress"] = *egress;
    }

    state.pid = init->pid;
    state.pid_start = proc::process_start(init->pid);
    state.lifecycle = Lifecycle::running;
    state.cgroup = SavedCgroup{cgroup::mode_name(layout->mode), cg.dirs()};
    if (auto r = save(paths, state); !r) return fail(r.error());
    return state;
}
}  // namespace

Result<json> create(const Paths& paths, const mount::Rootfs& rootfs, const CreateOptions& o) {
    std::string id = !o.id.empty() ? o.id : !rootfs.id.empty() ? rootfs.id : random_hex(kSandboxIdBytes);
    if (auto r = check_id(id); !r) return fail(r.error());
    if (auto r = fs::mkdir_p(paths.sandboxes(), 0700); !r) return fail(r.error());
    // mkdir is the claim on the id: a second create of the same id fails here.
    if (::mkdir(paths.state_dir(id).c_str(), 0700) < 0) {
        if (errno == EEXIST) return fail(make_error(Code::exists, "sandbox \"" + id + "\" already exists", id));
        return fail(sys_error("mkdir", paths.state_dir(id)));
    }
    auto held = lock(paths, id);
    if (!held) return fail(held.error());

    json limits = json::object();
    if (o.limits.memory) limits["memory"] = o.limits.memory;
    if (o.limits.cpus > 0) limits["cpus"] = o.limits.cpus;
    if (o.limits.pids) limits["pids"] = o.limits.pids;
    if (o.disk) limits["disk"] = o.disk;
    limits["tmp"] = o.tmp_size;
    State state{.id = id, .lifecycle = Lifecycle::creating};
    state.extra = {{"kind", "container"},
                  {"hostname", o.hostname.empty() ? id.substr(0, 63) : o.hostname},
                  {"rootfs", rootfs.to_record()},
                  {"limits", limits},
                  {"labels", o.labels},
                  {"memcg", cgroup::memcg_name(o.memcg)},
                  {"network", o.network},
                  {"created", now_rfc3339()},
                  {"created_unix", now_unix()},
                  {"ttl", o.ttl_ms ? json(double(o.ttl_ms) / 1000) : json(nullptr)},
                  {"idle_ttl", o.idle_ttl_ms ? json(double(o.idle_ttl_ms) / 1000) : json(nullptr)},
                  {"last_exec", nullptr},
                  {"class", cpu_class_name(o.cpu_class)},
                  {"security", security_record(o.security)}};
    state.extra.update(resolve_config(rootfs, o));
    state.extra.update(core_sched_record(o.cpu_class, core_sched_errno()));
    if (!o.policy.empty()) state.extra["policy"] = o.policy;
    if (o.guard) state.extra["guard"] = guard::policy_record(*o.guard);
    if (!o.binds.empty()) state.extra["binds"] = binds_record(o.binds);
    // Written before any work: a crash from here on leaves a state destroy() can finish.
    if (auto r = save(paths, state); !r) return fail(r.error());

    auto made = build(paths, rootfs, o, id, state);
    if (!made) {
        held = fs::Lock();
        (void)destroy(paths, id, Missing::ok);
        return fail(made.error());
    }
    return public_record(*made);
}

}  // namespace dsec::sandbox
