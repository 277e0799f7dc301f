#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "dsec/ns/idrange.h"
#include "dsec/sandbox/log.h"
#include "dsec/sandbox/network.h"
#include "dsec/sandbox/sandbox.h"
#include "dsec/sandbox/shared_memory.h"

namespace dsec::sandbox {

namespace {
// Killing pid 1 of a pid namespace kills everything in it; the pidfd tells when it is gone.
void kill_init(const State& state) {
    if (!init_alive(state)) return;
    int pid = state.pid;
    Fd pidfd(int(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd || !init_alive(state)) return;  // re-check: the pid may have been reused meanwhile
    ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
    struct pollfd p = {pidfd.get(), POLLIN, 0};
    while (::poll(&p, 1, 5000) < 0 && errno == EINTR) {
    }
}

bool anything_left(const Paths& paths, const std::string& id, const cgroup::Cgroup& cg) {
    if (fs::exists(paths.state_dir(id)) || fs::exists(paths.data_dir(id))) return true;
    for (auto& d : cg.dirs())
        if (fs::exists(d)) return true;
    return false;
}
}  // namespace

Result<json> destroy(const Paths& paths, const std::string& id, Missing missing, const std::string& keep_log_dir) {
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
    kill_init(st);
    if (auto r = cg.remove(); !r) return fail(r.error());
    // Nothing runs any more, so nothing more is logged; a failure stops here, with the
    // state "destroying" for the next destroy to finish.
    if (!keep_log_dir.empty())
        if (auto r = keep_log(paths, id, keep_log_dir); !r) return fail(std::move(r.error()).context("keeping the command log"));
    // The veth went with the network namespace; its egress slot and pins stay.
    if (auto r = stop_egress(paths, id, st.extra); !r) return fail(r.error());
    // Its host id range goes back to the pool once nothing of it runs.
    const json& sec = st.extra.contains("security") ? st.extra["security"] : json();
    if (sec.is_object() && sec.contains("slot"))
        if (auto r = ns::release_ids(paths.run, sec.value("slot", 0u), id); !r) return fail(r.error());
    // The overlay's mount went with the mount namespace; what is left is plain files.
    if (auto r = fs::remove_tree(paths.data_dir(id)); !r) return fail(r.error());
    std::string rootfs_id = st.rootfs_id();
    if (!rootfs_id.empty() && rootfs_id != id && check_id(rootfs_id))
        if (auto r = fs::remove_tree(paths.data_dir(rootfs_id)); !r) return fail(r.error());
    if (auto r = fs::remove_tree(paths.state_dir(id)); !r) return fail(r.error());
    // The last sandbox out of the run directory's shared memory group removes it.
    if (cg.memcg() == cgroup::Memcg::shared) (void)remove_shared_memory_if_unused(paths);
    return json{{"type", "sandbox"}, {"v", 1}, {"id", id}, {"state", "destroyed"}};
}

}  // namespace dsec::sandbox
