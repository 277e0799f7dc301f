#include "dsec/snapshot/reset.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "dsec/mount/usage.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/network.h"
#include "dsec/sandbox/open.h"
#include "dsec/sandbox/sandbox.h"
#include "dsec/guard/files.h"
#include "dsec/sandbox/policy.h"
#include "dsec/sandbox/start.h"
#include "dsec/snapshot/freeze.h"

namespace dsec::snapshot {

// Reset is the sandbox lifecycle run again: its names are used throughout.
using namespace dsec::sandbox;

namespace {
// Sends SIGKILL to the init, which takes its pid namespace (every process of the
// sandbox: exec joins it) down; returns its pidfd without waiting. Not cgroup.kill: on
// this kernel a group once killed that way kills every child later cloned into it with
// CLONE_INTO_CGROUP, the new init included.
Result<Fd> kill_init(const State& state) {
    if (!init_alive(state)) return Fd();
    Fd pidfd(int(::syscall(SYS_pidfd_open, state.pid, 0)));
    // Re-checked once the pidfd pins the process: the pid may have been reused.
    if (!pidfd || !init_alive(state)) return Fd();
    if (::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0) < 0)
        return fail(sys_error("pidfd_send_signal", state.id));
    return pidfd;
}

// Moves the upper and work aside (a rename: instant whatever they hold) and makes empty
// ones as dsec-mount does. Returns the directory holding the old pair, to remove later.
Result<std::string> swap_upper(const mount::Rootfs& rootfs) {
    std::string dir = fs::dirname(rootfs.upper);
    std::string old = dir + "/reset-old";
    // Left over from a reset that died between the swap and the removal.
    if (auto r = fs::remove_tree(old); !r) return fail(r.error());
    if (::mkdir(old.c_str(), 0700) < 0) return fail(sys_error("mkdir", old));
    for (auto [path, name, mode] : {std::tuple{rootfs.upper, "/upper", 0755u}, {rootfs.work, "/work", 0700u}}) {
        if (::rename(path.c_str(), (old + name).c_str()) < 0 && errno != ENOENT) return fail(sys_error("rename", path));
        if (::mkdir(path.c_str(), mode) < 0) return fail(sys_error("mkdir", path));
        if (::chmod(path.c_str(), mode) < 0) return fail(sys_error("chmod", path));
    }
    return old;
}
}  // namespace

Result<Reset> reset(const sandbox::Paths& paths, const std::string& id) {
    if (auto r = check_id(id); !r) return fail(r.error());
    auto held = lock(paths, id);
    if (!held) return fail(held.error());
    auto opened = open_sandbox(paths, id, Need::running);
    if (!opened) return fail(opened.error());
    State* state = &opened->state;
    const cgroup::Cgroup* cg = &opened->cg;
    const json& fields = state->extra;
    auto rootfs = mount::Rootfs::from_record(fields.value("rootfs", nlohmann::json::object()));
    if (!rootfs) return fail(rootfs.error());
    auto sec = security_from_state(fields);
    if (!sec) return fail(sec.error());
    auto recorded = policy_of_state(fields);
    if (!recorded) return fail(recorded.error());
    std::shared_ptr<const guard::Policy> policy = *recorded;
    (void)thaw_abandoned(paths, *state, *cg);
    StartSpec spec;
    spec.id = id;
    spec.hostname = fields.value("hostname", id.substr(0, 63));
    auto init_program = find_init();
    if (!init_program) return fail(init_program.error());
    spec.init_program = *init_program;
    spec.security = *sec;
    const auto& sec_state = fields.value("security", nlohmann::json::object());
    spec.ids.host_first = sec_state.value("host_uid", 0u);
    spec.ids.slot = sec_state.value("slot", 0u);
    const auto& limits = fields.value("limits", nlohmann::json::object());
    spec.disk = limits.value("disk", uint64_t(0));
    spec.tmp_size = limits.value("tmp", kDefaultTmpSize);
    spec.cpu_class = cpu_class_of(fields);

    Reset out;
    // A paused sandbox is thawed first: the new init must run, and SIGKILL lands on thaw.
    if (cg->frozen())
        if (auto r = cg->thaw(); !r) return fail(r.error());
    auto killed = kill_init(*state);
    if (!killed) return fail(killed.error());
    out.old_init = std::move(*killed);
    if (spec.disk == 0) {
        // With --disk the old tmpfs goes with the old init; start() makes a fresh one.
        auto swapped = swap_upper(*rootfs);
        if (!swapped) return fail(swapped.error());
        out.old_upper = *swapped;
    }
    auto init = start(paths, *rootfs, spec, *cg);
    if (!init && out.old_init) {
        // The dying processes still count against the cgroup's limits (a sandbox at its
        // --pids limit leaves no room for a new init): once they are gone, once more.
        struct pollfd p = {out.old_init.get(), POLLIN, 0};
        while (::poll(&p, 1, 5000) < 0 && errno == EINTR) {
        }
        for (int round = 0; round < 100 && !cg->pids().empty(); round++) ::usleep(10000);
        init = start(paths, *rootfs, spec, *cg);
    }
    if (!init) {
        state->pid = 0;
        (void)save(paths, *state);
        return fail(std::move(init.error()).context("restarting sandbox " + id));
    }
    // The policy's mounts again, before anything runs in the new init's namespace.
    if (policy && !policy->files.empty())
        if (auto r = guard::apply_file_rules(init->pid, mount::process_start(init->pid), policy->files, paths.run); !r) {
            ::kill(init->pid, SIGKILL);
            state->pid = 0;
            (void)save(paths, *state);
            return fail(std::move(r.error()).context("applying the policy again after reset of " + id));
        }
    // Its egress again: the old veth went with the old init's network namespace.
    if (auto r = relink_egress(paths, id, init->pid, state->extra); !r) {
        ::kill(init->pid, SIGKILL);
        state->pid = 0;
        (void)save(paths, *state);
        return fail(std::move(r.error()).context("restoring the network of " + id + " after reset"));
    }
    state->pid = init->pid;
    state->pid_start = mount::process_start(init->pid);
    state->extra["resets"] = state->extra.value("resets", 0) + 1;
    state->extra["reset"] = now_rfc3339();
    if (auto r = save(paths, *state); !r) return fail(r.error());
    out.record = public_record(*state);
    return out;
}

Status finish(Reset& r) {
    if (r.old_init) {
        struct pollfd p = {r.old_init.get(), POLLIN, 0};
        int n;
        while ((n = ::poll(&p, 1, 5000)) < 0 && errno == EINTR) {
        }
        if (n == 0) return fail(make_error(Code::busy, "the sandbox's previous init did not die", r.old_upper));
        r.old_init.reset();
    }
    if (r.old_upper.empty()) return {};
    return fs::remove_tree(std::exchange(r.old_upper, ""));
}

}  // namespace dsec::snapshot
