#include "dsec/ns/join.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "dsec/sys/process.h"
#include "dsec/ns/clone_on_stack.h"
#include "dsec/ns/confinement.h"
#include "dsec/ns/helper_stack.h"
#include "dsec/ns/spawn.h"

namespace dsec::ns {

namespace {
struct BodyArgs {
    const std::function<void()>* body;
    HelperStack* stack;
};

int body_entry(void* p) {
    auto* a = static_cast<BodyArgs*>(p);
    a->stack->entered();
    (*a->body)();
    ::_exit(127);
}

[[noreturn]] void helper(const JoinSpec& spec, const std::vector<int>& keep, int pidfd, int report_fd,
                         const std::function<void()>& body, HelperStack* body_stack, bool in_unified) {
    auto send_fail = [&](const char* op) {
        dsec_send_report(report_fd, errno ? errno : EIO, 0, op, "");
        ::_exit(1);
    };
    // Nothing of dsec-run's goes in: only what the body needs (and what we need to get there).
    dsec_close_all_but(keep.data(), keep.size());
    // The OOM killer must pick what runs in a sandbox before the init that holds it.
    // Lowering the init's score needs CAP_SYS_RESOURCE, which hosts often withhold;
    // raising ours never does, and the child inherits it.
    int adj = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (adj < 0 || ::write(adj, "1000", 4) != 4) send_fail("oom_score_adj");
    ::close(adj);
    // Cgroups next: the child then starts inside the sandbox's limits. The unified tree's
    // group was entered at our clone where the kernel could (in_unified).
    auto join = [&](const std::string& file) {
        int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) return;  // a hierarchy without this sandbox
        if (fd < 0 || ::write(fd, "0", 1) < 0) send_fail("join cgroup");
        ::close(fd);
    };
    for (auto& f : spec.cgroup_join) join(f);
    if (!in_unified && !spec.cgroup_unified.empty()) join(spec.cgroup_unified + "/cgroup.procs");
    int flags = spec.namespaces ? spec.namespaces : sandbox_namespaces() | CLONE_NEWCGROUP;
    if (spec.userns) flags |= CLONE_NEWUSER;
    if (::setns(pidfd, flags) < 0) send_fail("setns");
    // Root of the sandbox's namespace (its host range), never host root inside it.
    if (spec.userns && (::syscall(SYS_setgroups, 0, nullptr) < 0 || ::syscall(SYS_setresgid, 0, 0, 0) < 0 ||
                        ::syscall(SYS_setresuid, 0, 0, 0) < 0))
        send_fail("become root of the sandbox");
    // That change of ids made our shared memory map as dumpable as fs.suid_dumpable says
    // (1 on some hosts): not dumpable again before the child, which is visible inside.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) send_fail("dumpable");
    // CLONE_PARENT: the child is ours (dsec-run's) to wait for, not this helper's.
    long pid;
    if (body_stack) {
        // As the helper itself: in our memory on a stack of its own, while this helper
        // sleeps until its execve; no copy of dsec-run's page tables, no copy-on-write
        // faults after (measured: dup_mmap and those faults were about a tenth of exec's
        // CPU time).
        BodyArgs args{&body, body_stack};
        pid = ::clone(body_entry, body_stack->top(), CLONE_VM | CLONE_VFORK | CLONE_PARENT | SIGCHLD, &args);
        body_stack->returned();
    } else {
        pid = ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
        if (pid == 0) {
            body();
            ::_exit(127);
        }
    }
    if (pid < 0) send_fail("clone");
    dsec_send_report(report_fd, 0, int(pid), "ok", "");
    ::_exit(0);
}

struct HelperArgs {
    const JoinSpec* spec;
    const std::vector<int>* keep;
    int pidfd;
    int report_fd;
    const std::function<void()>* body;
    HelperStack* stack;
    HelperStack* body_stack;  // null: the child is a copy of us
    bool in_unified;          // started in the sandbox's unified-tree group (CLONE_INTO_CGROUP)
};

int helper_entry(void* p) {
    auto* a = static_cast<HelperArgs*>(p);
    a->stack->entered();
    helper(*a->spec, *a->keep, a->pidfd, a->report_fd, *a->body, a->body_stack, a->in_unified);
}

}  // namespace

Result<Joined> spawn_inside(const JoinSpec& spec, const std::function<void()>& body) {
    Fd pidfd(int(::syscall(SYS_pidfd_open, spec.init_pid, 0)));
    if (!pidfd || !proc::process_alive(spec.init_pid, spec.init_start))
        return fail(make_error(Code::not_running, "the sandbox's init process is gone"));
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    Fd rd(p[0]), wr(p[1]);
    // The helper shares our memory and we sleep until it exits (vfork semantics): no page
    // tables to copy for it and none to tear down when it goes, about 1.5 ms per exec.
    // Joining namespaces and cgroups is per process, so it still does that alone.
    HelperStack stack;
    if (stack.base == MAP_FAILED) return fail(sys_error("mmap", "join helper stack"));
    std::optional<HelperStack> body_stack;
    if (spec.body_execs && body_stack.emplace().base == MAP_FAILED) return fail(sys_error("mmap", "exec child stack"));
    std::vector<int> keep = spec.keep_fds;
    keep.insert(keep.end(), {pidfd.get(), wr.get()});
    std::sort(keep.begin(), keep.end());
    // Dumpability belongs to the memory map, which the helper shares and the child copies.
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    HelperArgs args{&spec, &keep, pidfd.get(), wr.get(), &body, &stack, body_stack ? &*body_stack : nullptr, false};
    // Started in the sandbox's group of the unified tree, where it has one: no write of
    // the helper's pid into it (clone_on_stack.h says what that would cost).
    Fd unified;
    if (!spec.cgroup_unified.empty())
        unified.reset(::open(spec.cgroup_unified.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    long h = -1;
    if (unified) {
        clone_args ca;
        std::memset(&ca, 0, sizeof ca);
        ca.flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP;
        ca.exit_signal = SIGCHLD;
        ca.stack = uint64_t(uintptr_t(stack.base));
        ca.stack_size = HelperStack::kSize;
        ca.cgroup = uint64_t(unified.get());
        args.in_unified = true;
        h = clone3_on_stack(&ca, helper_entry, &args);
    }
    if (h < 0 && (!unified || errno == ENOSYS)) {
        args.in_unified = false;
        h = ::clone(helper_entry, stack.top(), CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
    }
    int clone_err = errno;
    stack.returned();
    // A group removed since we opened it (ENODEV) is a sandbox being destroyed.
    if (h < 0 && args.in_unified && clone_err == ENODEV)
        return fail(make_error(Code::not_running, "the sandbox's init process is gone"));
    if (h < 0) return fail(errno_error(clone_err, args.in_unified ? "clone3" : "clone", "join helper"));
    wr.reset();
    auto reported = read_report(rd.get(), "entering sandbox init " + std::to_string(spec.init_pid));
    while (::waitpid(pid_t(h), nullptr, 0) < 0 && errno == EINTR) {
    }
    if (!reported) {
        if (reported.error().err == ESRCH) return fail(make_error(Code::not_running, "the sandbox's init process is gone"));
        return fail(reported.error());
    }
    Joined j{*reported, Fd(int(::syscall(SYS_pidfd_open, *reported, 0)))};
    if (!j.pidfd) return fail(sys_error("pidfd_open", std::to_string(*reported)));
    return j;
}

}  // namespace dsec::ns
