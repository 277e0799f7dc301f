#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "dsec/ns/idrange.h"
#include "dsec/sandbox/log.h"
#include "dsec/sandbox/network.h"
#include "dsec/sandbox/sandbox.h"
#include "dsec/sandbox/shared_memory.h"

namespace dsec::sandbox {

Status Remains::finish() {
    mnt.reset();
    net.reset();
    Status result;
    for (auto& tree : trees)
        if (auto r = fs::remove_tree(tree); !r && result) result = r;
    trees.clear();
    return result;
}

namespace {
// The namespace of `kind` ("mnt", "net") of the process `pidfd` is for: from the pidfd
// itself where the kernel can (6.11+, PIDFD_GET_*_NAMESPACE, `request`), else by its pid
// under /proc. (Had the pid been reused since the caller's check, that is another
// process's namespace, held for as long as the caller keeps it: nothing is done with it.)
Fd namespace_of(int pidfd, int pid, unsigned long request, const char* kind) {
    int fd = ::ioctl(pidfd, request, 0);
    if (fd >= 0) return Fd(fd);
    return Fd(::open(("/proc/" + std::to_string(pid) + "/ns/" + kind).c_str(), O_RDONLY | O_CLOEXEC));
}

// Killing pid 1 of a pid namespace kills everything in it; the pidfd tells when it is gone.
// Its mount and network namespaces are held from before the kill, so that its exit tears
// down neither: both wait on RCU grace periods, and with thousands of sandboxes alive the
// network namespace's cleanup walks every other one (docs/bench/oneshot-profile.md), all
// of which destroy would otherwise wait for.
Remains kill_init(const State& state) {
    constexpr unsigned long kGetMnt = _IO(0xFF, 3), kGetNet = _IO(0xFF, 4);  // linux/pidfd.h
    Remains held;
    if (!init_alive(state)) return held;
    int pid = state.pid;
    Fd pidfd(int(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd || !init_alive(state)) return held;  // re-check: the pid may have been reused meanwhile
    held.mnt = namespace_of(pidfd.get(), pid, kGetMnt, "mnt");
    held.net = namespace_of(pidfd.get(), pid, kGetNet, "net");
    ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
    struct pollfd p = {pidfd.get(), POLLIN, 0};
    while (::poll(&p, 1, 5000) < 0 && errno == EINTR) {
    }
    return held;
}

// `tree` renamed to a name of its own beside it; "" when there is none or when it could
// not be renamed and was removed here instead.
Result<std::string> set_aside(const std::string& tree) {
    static std::atomic<unsigned> count{0};
    auto slash = tree.rfind('/');
    std::string aside = tree.substr(0, slash + 1) + ".gone-" + tree.substr(slash + 1) + "-" + std::to_string(::getpid()) +
                        "-" + std::to_string(count++);
    if (::rename(tree.c_str(), aside.c_str()) == 0) return aside;
    if (errno == ENOENT) return std::string();
    if (auto r = fs::remove_tree(tree); !r) return fail(r.error());
    return std::string();
}

bool anything_left(const Paths& paths, const std::string& id, const cgroup::Cgroup& cg) {
    if (fs::exists(paths.state_dir(id)) || fs::exists(paths.data_dir(id))) return true;
    for (auto& d : cg.dirs())
        if (fs::exists(d)) return true;
    return false;
}
}  // namespace

Result<json> destroy(const Paths& paths, const std::string& id, Missing missing, const std::string& keep_log_dir,
                     Remains* remains) {
    if (auto r = check_id(id); !r) return fail(r.error());
    // Under the sandbox's lock, so that the state read once here is the one torn down.
    fs::Lock held;
    if (fs::exists(paths.state_dir(id))) {
        auto l = lock(paths, id);
        if (l) held = std::move(*l);
    }
    // Not open_sandbox(): a sandbox whose state is missing, does not parse or names a
    // cgroup the layout no longer gives is destroyed all the same, in the memcg mode the
    // state names (own when it cannot be read).
    auto state = load(paths, id);
    State st = state ? *state : State{.id = id};
    auto found = cgroup_of(paths, st);
    if (!found) return fail(found.error());
    const cgroup::Cgroup& cg = *found;
    if (!anything_left(paths, id, cg)) {
        if (missing == Missing::error)
            return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id));
        return json{{"type", "sandbox"}, {"v", 1}, {"id", id}, {"state", "absent"}};
    }
    // Whatever the state says (or if it is unreadable), mark the teardown first so that a
    // crash in the middle is seen and finished by the next destroy or gc.
    if (fs::exists(paths.state_dir(id))) {
        st.lifecycle = Lifecycle::destroying;
        (void)save(paths, st);
    }
    Remains remaining = kill_init(st);
    if (auto r = cg.remove(); !r) return fail(r.error());
    // Nothing runs any more, so nothing more is logged; a failure stops here, with the
    // state "destroying" for the next destroy to finish.
    if (!keep_log_dir.empty())
        if (auto r = keep_log(paths, id, keep_log_dir); !r) return fail(std::move(r.error()).context("keeping the command log"));
    // Its veth (removed from the host's end: the network namespace is held), egress slot
    // and pins.
    if (auto r = stop_egress(paths, id, st.extra); !r) return fail(r.error());
    // Its host id range goes back to the pool once nothing of it runs.
    const json& sec = st.extra.contains("security") ? st.extra["security"] : json();
    if (sec.is_object() && sec.contains("slot"))
        if (auto r = ns::release_ids(paths.run, sec.value("slot", 0u), id); !r) return fail(r.error());
    // The upper and work (and those of a rootfs mounted under its own id): plain files,
    // whose overlay is only in the held mount namespace.
    std::vector<std::string> trees{paths.data_dir(id)};
    std::string rootfs_id = st.rootfs_id();
    if (!rootfs_id.empty() && rootfs_id != id && check_id(rootfs_id)) trees.push_back(paths.data_dir(rootfs_id));
    for (auto& tree : trees) {
        auto aside = remains ? set_aside(tree) : Result<std::string>(tree);
        if (!aside) return fail(aside.error());
        if (!aside->empty()) remaining.trees.push_back(std::move(*aside));
    }
    if (!remains)
        if (auto r = remaining.finish(); !r) return fail(r.error());
    if (auto r = fs::remove_tree(paths.state_dir(id)); !r) return fail(r.error());
    // The last sandbox out of the run directory's shared memory group removes it.
    if (cg.memcg() == cgroup::Memcg::shared) (void)remove_shared_memory_if_unused(paths);
    if (remains) *remains = std::move(remaining);
    return json{{"type", "sandbox"}, {"v", 1}, {"id", id}, {"state", "destroyed"}};
}

}  // namespace dsec::sandbox
