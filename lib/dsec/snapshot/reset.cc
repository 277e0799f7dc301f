#include "dsec/snapshot/reset.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "dsec/layer/store.h"
#include "dsec/mount/layers.h"
#include "dsec/mount/rootfs.h"
#include "dsec/sys/process.h"
#include "dsec/sandbox/network.h"
#include "dsec/sandbox/open.h"
#include "dsec/sandbox/sandbox.h"
#include "dsec/sandbox/standby.h"
#include "dsec/snapshot/freeze.h"

namespace dsec::snapshot {

// Reset is the sandbox lifecycle run again: its names are used throughout.
using namespace dsec::sandbox;

namespace {
// Sends SIGKILL to the init, which takes its pid namespace (every process of the
// sandbox: exec joins it) down; returns its pidfd without waiting. Not cgroup.kill: on
// this kernel a group once killed that way kills every child later cloned into it with
// CLONE_INTO_CGROUP, the new init included (and it would take the standby too).
Result<Fd> kill_init(int pid, unsigned long long start) {
    if (pid <= 0 || !proc::process_alive(pid, start)) return Fd();
    Fd pidfd(int(::syscall(SYS_pidfd_open, pid, 0)));
    // Re-checked once the pidfd pins the process: the pid may have been reused.
    if (!pidfd || !proc::process_alive(pid, start)) return Fd();
    if (::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0) < 0)
        return fail(sys_error("pidfd_send_signal", std::to_string(pid)));
    return pidfd;
}

// The sandbox is left without an init ("dead" in ls), for destroy.
Error leave_dead(const sandbox::Paths& paths, State& state, Error e) {
    state.pid = 0;
    state.standby = {};
    (void)save(paths, state);
    return e;
}

// Mounts again each layer of the sandbox that is no longer mounted (a `dsec-mount
// release`, a reboot of the run directory's tmpfs...), from the store, as create --layers
// does; the new init's clones of them would otherwise be bare directories.
Status remount_layers(const dsec::Paths& paths, const State& state) {
    auto rootfs = state.rootfs();
    if (!rootfs) return fail(rootfs.error());
    layer::Store store(paths.layers());
    for (auto& l : rootfs->layers) {
        if (l.path.empty() || mount::is_layer_mount(l.path)) continue;
        auto found = store.resolve(l.digest);
        if (!found) return fail(std::move(found.error()).context("mounting layer " + l.name + " again"));
        auto mounted = mount::mount_layer(paths, store, *found, false);
        if (!mounted) return fail(std::move(mounted.error()).context("mounting layer " + l.name + " again"));
    }
    return {};
}

// A running sandbox's state and cgroup, its lock held.
struct Held {
    fs::Lock lock;
    State state;
    cgroup::Cgroup cg;
};

Result<Held> hold_running(const sandbox::Paths& paths, const std::string& id) {
    if (auto r = check_id(id); !r) return fail(r.error());
    auto held = lock(paths, id);
    if (!held) return fail(held.error());
    auto opened = open_sandbox(paths, id, Need::running);
    if (!opened) return fail(opened.error());
    // A snapshot killed with its watchdog left the sandbox frozen: thawed first.
    (void)thaw_abandoned(paths, opened->state, opened->cg);
    return Held{std::move(*held), std::move(opened->state), std::move(opened->cg)};
}
}  // namespace

Result<Reset> reset(const dsec::Paths& store_paths, const std::string& id) {
    sandbox::Paths paths(store_paths);
    auto held = hold_running(paths, id);
    if (!held) return fail(held.error());
    State& state = held->state;
    const cgroup::Cgroup& cg = held->cg;

    Reset out;
    // A paused sandbox is thawed first: the new init must run, and SIGKILL lands on thaw.
    if (cg.frozen())
        if (auto r = cg.thaw(); !r) return fail(r.error());
    Standby next = state.standby;
    out.from_standby = next.alive();
    int old_pid = state.pid;
    unsigned long long old_start = state.pid_start;
    if (!out.from_standby) {
        // No standby (or a dead one): the old init goes first (its processes count against
        // the cgroup's limits), then a new one starts beside the dying one.
        if (next.pid) state.standby = {};
        if (auto r = remount_layers(store_paths, state); !r) return fail(r.error());
        auto killed = kill_init(old_pid, old_start);
        if (!killed) return fail(killed.error());
        out.old_init = std::move(*killed);
        auto made = start_next_init(paths, state, cg);
        if (!made && out.old_init) {
            // A sandbox at its --pids limit leaves no room for a new init until the dying
            // processes are gone: once they are, once more.
            struct pollfd p = {out.old_init.get(), POLLIN, 0};
            while (::poll(&p, 1, 5000) < 0 && errno == EINTR) {
            }
            for (int round = 0; round < 100 && !cg.pids().empty(); round++) ::usleep(10000);
            made = start_next_init(paths, state, cg);
        }
        if (!made) return fail(leave_dead(paths, state, std::move(made.error()).context("restarting sandbox " + id)));
        next = *made;
    } else if (::kill(next.pid, SIGCONT) < 0) {
        return fail(sys_error("kill SIGCONT", std::to_string(next.pid)));
    }
    // Its egress moves to the new init (the old link is removed first, which cuts the old
    // sandbox off).
    if (auto r = relink_egress(paths, id, next.pid, state.extra); !r) {
        ::kill(next.pid, SIGKILL);
        (void)kill_init(old_pid, old_start);
        return fail(leave_dead(paths, state, std::move(r.error()).context("restoring the network of " + id + " after reset")));
    }
    // Execs go to the new init from here (its socket over the old one's), the old one
    // answering none that come after.
    std::string sockets = paths.state_dir(id) + "/";
    if (::rename((sockets + sandbox::standby_exec_socket(next.upper)).c_str(),
                 (sockets + paths.exec_socket_name()).c_str()) < 0)
        (void)::unlink((sockets + paths.exec_socket_name()).c_str());  // then every exec joins
    // One write commits the swap: the new init, and the upper it runs over.
    out.leftovers = upper_leftovers(state.upper(), state.work());
    state.set_upper(next.upper, next.work);
    state.standby = {};
    state.pid = next.pid;
    state.pid_start = next.pid_start;
    state.resets++;
    state.reset_at = now_rfc3339();
    if (auto r = save(paths, state); !r) return fail(r.error());
    // With a standby the old init dies only now: a kill before the write above leaves the
    // sandbox running in it (and a continued standby that the next reset uses), one after
    // it an unnamed init that the next standby's making or gc kills (sandbox/standby.h).
    // (The reset is made either way: an old init that could not be signalled is such an init.)
    if (out.from_standby)
        if (auto killed = kill_init(old_pid, old_start); killed) out.old_init = std::move(*killed);
    out.record = public_record(state);
    return out;
}

Result<json> keep_standby(const dsec::Paths& store_paths, const std::string& id) {
    sandbox::Paths paths(store_paths);
    auto held = hold_running(paths, id);
    if (!held) return fail(held.error());
    State& state = held->state;
    if (state.standby.alive()) return state.standby.to_record();
    // An init cloned into a frozen cgroup would never report ready.
    if (held->cg.frozen())
        return fail(make_error(Code::busy, "sandbox \"" + id + "\" is paused: no standby made", id));
    state.standby = {};
    // What killed resets left (an init the state does not name would otherwise live on);
    // a failure here is gc's to report, not a reason to refuse a standby.
    (void)sweep_standbys(paths, state, held->cg);
    if (auto r = remount_layers(store_paths, state); !r) return fail(r.error());
    auto made = make_standby(paths, state, held->cg);
    if (!made) return fail(std::move(made.error()).context("making a standby for " + id));
    state.standby = *made;
    if (auto r = save(paths, state); !r) {
        ::kill(made->pid, SIGKILL);
        return fail(r.error());
    }
    return state.standby.to_record();
}

Status finish(Reset& r) {
    if (r.old_init) {
        struct pollfd p = {r.old_init.get(), POLLIN, 0};
        int n;
        while ((n = ::poll(&p, 1, 5000)) < 0 && errno == EINTR) {
        }
        if (n == 0) return fail(make_error(Code::busy, "the sandbox's previous init did not die", ""));
        r.old_init.reset();
    }
    Status first;
    for (auto& path : std::exchange(r.leftovers, {}))
        if (auto removed = fs::remove_tree(path); !removed && first) first = std::move(removed);
    return first;
}

}  // namespace dsec::snapshot
