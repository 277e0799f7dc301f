#include "dsec/snapshot/snapshot.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

#include "dsec/layer/build.h"
#include "dsec/ns/idrange.h"
#include "dsec/ns/spawn.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/log.h"
#include "dsec/sandbox/open.h"
#include "dsec/snapshot/freeze.h"
#include "dsec/snapshot/scrub.h"
#include "dsec/sys/fd.h"

namespace dsec::snapshot {

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Where the sandbox's upper is, and the sandbox's id map when it is read through the
// init's idmapped mount.
struct Source {
    Fd dir;
    std::optional<ns::IdMap> ids;
};

// Without --disk the upper is the rootfs's directory on local disk, its files owned by
// the ids seen inside. With --disk it is on a tmpfs only the init's mounts hold: reached
// through the idmapped clone the init keeps open, where owners show as host ids.
Result<Source> open_upper(const sandbox::State& st) {
    const nlohmann::json& state = st.extra;
    Source s;
    bool on_tmpfs = state.contains("limits") && state["limits"].is_object() && state["limits"].contains("disk");
    std::string path;
    if (on_tmpfs) {
        path = "/proc/" + std::to_string(st.pid) + "/fd/" + std::to_string(ns::kInitUpperFd) + "/upper";
        const auto& sec = state.value("security", nlohmann::json::object());
        if (sec.value("userns", "private") != "host") {
            // The map the init was given (uid and gid maps are the same), whichever
            // version of dsec wrote it.
            auto ids = ns::read_id_map(st.pid, "uid_map");
            if (!ids) return fail(ids.error());
            s.ids = std::move(*ids);
        }
    } else {
        path = state["rootfs"].value("upper", "");
    }
    s.dir.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!s.dir) return fail(sys_error("open upper", path));
    // Opened through the pid: it must still be the sandbox's init.
    if (on_tmpfs && !sandbox::init_alive(st))
        return fail(make_error(Code::not_running, "the sandbox's init is gone", st.id));
    return s;
}

// `path` in the topmost mounted layer that has it, looked up without leaving the layer
// (layers are mounted on the host without an idmap: owners are as inside).
std::optional<struct stat> lower_stat(const std::vector<std::string>& lowers, const std::string& path) {
    struct open_how how = {};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    for (auto& dir : lowers) {
        Fd root(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!root) continue;
        Fd f(int(::syscall(SYS_openat2, root.get(), path.c_str(), &how, sizeof how)));
        struct stat st;
        if (f && ::fstat(f.get(), &st) == 0) return st;
    }
    return std::nullopt;
}
}  // namespace

Result<std::vector<std::string>> parents_of(const nlohmann::json& state) {
    std::vector<std::string> out;
    if (state.contains("rootfs") && state["rootfs"].is_object() && state["rootfs"].contains("layers") &&
        state["rootfs"]["layers"].is_array())
        for (auto& l : state["rootfs"]["layers"])
            if (l.is_object() && l.value("digest", "") != "") out.push_back(l.value("digest", ""));
    if (out.empty()) return fail(make_error(Code::bad_input, "the sandbox's state names no layers", state.value("id", "")));
    return out;
}

nlohmann::json Snapshot::record(const layer::Store& store, const std::string& id) const {
    nlohmann::json r = layer.to_record(store.image_path(layer.digest));
    r["sandbox"] = id;
    r["scrubbed"] = stats.scrubbed;
    stats.annotate(r);
    r["frozen_ms"] = frozen_ms;
    r["duration_ms"] = duration_ms;
    r["log_position"] = log_position;
    return r;
}

Result<Snapshot> take(const sandbox::Paths& paths, const layer::Store& store, const std::string& id,
                      const SnapshotOptions& opts) {
    auto t0 = Clock::now();
    if (auto r = sandbox::check_id(id); !r) return fail(r.error());
    if (!opts.name.empty())
        if (auto r = layer::check_name(opts.name); !r) return fail(r.error());
    if (auto r = layer::check_compression(opts.compression); !r) return fail(r.error());
    PackOptions pack;
    pack.keep_special = opts.keep_special;
    if (!opts.policy.empty()) {
        auto scrub = scrub_paths_from_file(opts.policy);
        if (!scrub) return fail(scrub.error());
        pack.scrub = *scrub;
    }

    // The copy holds two descriptors per directory level of the upper.
    struct rlimit nofile;
    if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &nofile);
    }

    auto held = sandbox::lock(paths, id);
    if (!held) return fail(held.error());
    auto opened = sandbox::open_sandbox(paths, id, sandbox::Need::running_init);
    if (!opened) return fail(opened.error());
    sandbox::State* state = &opened->state;
    const cgroup::Cgroup* cg = &opened->cg;
    auto parents = parents_of(state->to_record());
    if (!parents) return fail(parents.error());
    if (auto r = thaw_abandoned(paths, *state, *cg); !r) return fail(r.error());
    auto source = open_upper(*state);
    if (!source) return fail(source.error());
    if (source->ids) pack.inside = [&ids = *source->ids](uint32_t host) { return ids.inside(host); };
    std::vector<std::string> lowers = state->extra["rootfs"].value("lowerdirs", std::vector<std::string>{});
    pack.lower_stat = [&lowers](const std::string& p) { return lower_stat(lowers, p); };

    if (auto r = store.init(); !r) return fail(r.error());
    auto stage = store.staging("snapshot-");
    if (!stage) return fail(stage.error());
    std::string tree = stage->path() + "/tree";
    if (::mkdir(tree.c_str(), 0755) < 0) return fail(sys_error("mkdir", tree));

    Snapshot snap;
    {
        auto frozen_at = Clock::now();
        auto freeze = Freeze::start(paths, *state, *cg);
        if (!freeze) return fail(freeze.error());
        // The log's end now: the commands that made these files are the ones before it.
        snap.log_position = sandbox::log_position(paths, id);
        auto copied = copy_upper(source->dir.get(), tree, pack, snap.stats);
        auto thawed = freeze->end();
        snap.frozen_ms = ms_since(frozen_at);
        if (!copied) return fail(std::move(copied.error()).context("copying the upper of " + id));
        if (!thawed) return fail(thawed.error());
    }
    held = fs::Lock();  // the sandbox runs again; the image is made without holding it

    layer::BuildOptions build;
    build.name = opts.name;
    build.compression = opts.compression;
    build.source = "sandbox:" + id;
    build.parents = *parents;
    auto published = layer::image_and_publish(store, tree, stage->path() + "/image.erofs", build);
    if (!published) return fail(published.error());
    snap.layer = *published;
    snap.duration_ms = ms_since(t0);
    return snap;
}

}  // namespace dsec::snapshot
