#include "dsec/ns/join.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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
#include <chrono>
#include <optional>

#include "dsec/sys/paths.h"
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

struct HelperArgs {
    const JoinSpec* spec;
    const std::vector<int>* keep;
    int pidfd;
    int report_fd;
    const std::function<void()>* body;
    HelperStack* stack;
    HelperStack* body_stack;    // null: the child is a copy of us
    bool in_unified;            // started in the sandbox's unified-tree group (CLONE_INTO_CGROUP)
    const char* unified_procs;  // else the group's cgroup.procs to write ("" if none)
    sigset_t mask;              // the signal mask to run (and leave to the child) with: the
                                // caller's (the thread that starts us blocks them all)
    pid_t child = 0;            // the child's pid, set by the kernel at its clone
};

// Runs in our memory while the thread that started it sleeps (vfork): it allocates
// nothing and writes nothing of ours but its own stack and `a.child`.
[[noreturn]] void helper(HelperArgs& a) {
    const JoinSpec& spec = *a.spec;
    const std::function<void()>& body = *a.body;
    int report_fd = a.report_fd;
    // Our handlers would run in the child, which a process inside can signal before its
    // execve: a SIGTERM from inside must not read as one sent to dsec-run. (One ignored
    // stays ignored, as the command would inherit it.)
    for (int sig : {SIGINT, SIGTERM}) {
        struct sigaction old = {};
        if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) ::signal(sig, SIG_DFL);
    }
    ::sigprocmask(SIG_SETMASK, &a.mask, nullptr);
    auto send_fail = [&](const char* op, const char* path = "") {
        dsec_send_report(report_fd, errno ? errno : EIO, 0, op, path);
        ::_exit(1);
    };
    // Nothing of dsec-run's goes in: only what the body needs (and what we need to get there).
    dsec_close_all_but(a.keep->data(), a.keep->size());
    // The OOM killer must pick what runs in a sandbox before the init that holds it.
    // Lowering the init's score needs CAP_SYS_RESOURCE, which hosts often withhold;
    // raising ours never does, and the child inherits it.
    int adj = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (adj < 0 || ::write(adj, "1000", 4) != 4) send_fail("oom_score_adj");
    ::close(adj);
    // Cgroups next: the child then starts inside the sandbox's limits. The unified tree's
    // group was entered at our clone where the kernel could (in_unified).
    auto join = [&](const char* file) {
        int fd = ::open(file, O_WRONLY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) return;  // a hierarchy without this sandbox
        if (fd < 0 || ::write(fd, "0", 1) < 0) send_fail("join cgroup", file);
        ::close(fd);
    };
    for (auto& f : spec.cgroup_join) join(f.c_str());
    if (!a.in_unified && *a.unified_procs) join(a.unified_procs);
    int flags = spec.namespaces ? spec.namespaces : sandbox_namespaces() | CLONE_NEWCGROUP;
    if (spec.userns) flags |= CLONE_NEWUSER;
    if (::setns(a.pidfd, flags) < 0) send_fail("setns");
    // Root of the sandbox's namespace (its host range), never host root inside it.
    if (spec.userns && (::syscall(SYS_setgroups, 0, nullptr) < 0 || ::syscall(SYS_setresgid, 0, 0, 0) < 0 ||
                        ::syscall(SYS_setresuid, 0, 0, 0) < 0))
        send_fail("become root of the sandbox");
    // That change of ids made our shared memory map as dumpable as fs.suid_dumpable says
    // (1 on some hosts): not dumpable again before the child, which is visible inside.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) send_fail("dumpable");
    // CLONE_PARENT: the child is ours (dsec-run's) to wait for, not this helper's; its pid
    // lands in a.child at once (CLONE_PARENT_SETTID), for the caller to end it by.
    long pid;
    if (HelperStack* body_stack = a.body_stack) {
        // As the helper itself: in our memory on a stack of its own, while this helper
        // sleeps until its execve; no copy of dsec-run's page tables, no copy-on-write
        // faults after (measured: dup_mmap and those faults were about a tenth of exec's
        // CPU time).
        BodyArgs args{&body, body_stack};
        pid = ::clone(body_entry, body_stack->top(), CLONE_VM | CLONE_VFORK | CLONE_PARENT | CLONE_PARENT_SETTID | SIGCHLD,
                      &args, &a.child);
        body_stack->returned();
    } else {
        pid = ::syscall(SYS_clone, CLONE_PARENT | CLONE_PARENT_SETTID | SIGCHLD, 0, &a.child, 0, 0);
        if (pid == 0) {
            body();
            ::_exit(127);
        }
    }
    if (pid < 0) send_fail("clone");
    dsec_send_report(report_fd, 0, int(pid), "ok", "");
    ::_exit(0);
}

int helper_entry(void* p) {
    auto* a = static_cast<HelperArgs*>(p);
    a->stack->entered();
    helper(*a);
}

// The thread a helper is started from. It sleeps in the helper's vfork, so that helper
// and child count as vfork children (the OOM killer passes them by, whose memory is
// ours, and an oom_score_adj written in them stays theirs) and share its thread-local
// storage rather than the caller's, while the caller waits with its deadline and
// signals. It then stays until released (Joined::parent_thread): the child's
// parent-death signal is tied to the thread that is its parent, this one.
struct Launch {
    HelperArgs* args = nullptr;
    int unified = -1;         // the sandbox's group of the unified tree, or -1
    pid_t helper = 0;         // set by the kernel at the clone (CLONE_PARENT_SETTID)
    long result = -1;         // what the clone returned
    int err = 0;              // and its errno
    int done[2] = {-1, -1};   // written once the clone has returned (the helper has gone)
    int release[2] = {-1, -1};  // its write end closed: the thread may end
    pthread_t thread{};
    bool running = false;

    // Once the thread has written it and we have read it: two descriptors fewer for as
    // long as the command runs.
    void close_done() {
        for (int& fd : done) {
            if (fd >= 0) ::close(fd);
            fd = -1;
        }
    }
    ~Launch() {
        if (running) {
            ::close(release[1]);
            release[1] = -1;
            ::pthread_join(thread, nullptr);
        }
        for (int fd : {done[0], done[1], release[0], release[1]})
            if (fd >= 0) ::close(fd);
    }
};

void* launch_main(void* p) {
    auto* l = static_cast<Launch*>(p);
    long h = -1;
    if (l->unified >= 0) {
        clone_args ca;
        std::memset(&ca, 0, sizeof ca);
        ca.flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP | CLONE_PARENT_SETTID;
        ca.parent_tid = uint64_t(uintptr_t(&l->helper));
        ca.exit_signal = SIGCHLD;
        ca.stack = uint64_t(uintptr_t(l->args->stack->base));
        ca.stack_size = HelperStack::kSize;
        ca.cgroup = uint64_t(l->unified);
        l->args->in_unified = true;
        h = clone3_on_stack(&ca, helper_entry, l->args);
    }
    if (h < 0 && (l->unified < 0 || errno == ENOSYS)) {
        l->args->in_unified = false;
        h = ::clone(helper_entry, l->args->stack->top(), CLONE_VM | CLONE_VFORK | CLONE_PARENT_SETTID | SIGCHLD, l->args,
                    &l->helper);
    }
    l->result = h;
    l->err = errno;
    l->args->stack->returned();
    char c = 0;
    (void)!::write(l->done[1], &c, 1);
    while (::read(l->release[0], &c, 1) < 0 && errno == EINTR) {
    }
    return nullptr;
}

// Starts `l`'s thread with every signal blocked (the caller's threads take them).
Status start_launch(Launch& l) {
    if (::pipe2(l.done, O_CLOEXEC) < 0 || ::pipe2(l.release, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    pthread_attr_t attr;
    ::pthread_attr_init(&attr);
    ::pthread_attr_setstacksize(&attr, 256 * 1024);
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &old);
    l.args->mask = old;
    int e = ::pthread_create(&l.thread, &attr, launch_main, &l);
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::pthread_attr_destroy(&attr);
    if (e != 0) return fail(errno_error(e, "pthread_create", "join helper"));
    l.running = true;
    return {};
}

bool readable(int fd, int ms) {
    pollfd p = {fd, POLLIN, 0};
    return ::poll(&p, 1, ms) > 0;
}

enum class Waited { done, timed_out, interrupted };

// Sleeps until the helper has gone (`l.done`), `timeout_ms` (0: none) has passed, or
// SIGINT or SIGTERM came (interrupted(): looked at every 50 ms, for another thread may
// have taken it).
Waited wait_for_helper(const Launch& l, uint64_t timeout_ms) {
    using Clock = std::chrono::steady_clock;
    constexpr int64_t kTickMs = 50;
    auto deadline = timeout_ms ? Clock::now() + std::chrono::milliseconds(timeout_ms) : Clock::time_point::max();
    for (;;) {
        int64_t wait = kTickMs;
        if (timeout_ms) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count() + 1;
            wait = std::clamp<int64_t>(left, 0, kTickMs);
        }
        if (readable(l.done[0], int(wait))) return Waited::done;
        if (interrupted()) return Waited::interrupted;
        if (Clock::now() >= deadline) return Waited::timed_out;
    }
}

// Ends a helper still at work (its pid comes at its clone: waited for, or for the
// clone's failure) and waits until its thread has come back from the clone.
void end_helper(const Launch& l) {
    pid_t h;
    while ((h = __atomic_load_n(&l.helper, __ATOMIC_ACQUIRE)) == 0 && !readable(l.done[0], 5)) {
    }
    if (h > 0) ::kill(h, SIGKILL);  // not yet reaped (by us, below), so still the helper's
    while (!readable(l.done[0], -1)) {
    }
}

}  // namespace

Result<Joined> spawn_inside(const JoinSpec& spec, const std::function<void()>& body) {
    Fd pidfd(int(::syscall(SYS_pidfd_open, spec.init_pid, 0)));
    if (!pidfd || !proc::process_alive(spec.init_pid, spec.init_start))
        return fail(make_error(Code::not_running, "the sandbox's init process is gone"));
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    Fd rd(p[0]), wr(p[1]);
    // The helper shares our memory: no page tables to copy for it and none to tear down
    // when it goes, about 1.5 ms per exec. Joining namespaces and cgroups is per process,
    // so it still does that alone. A thread of ours starts it (Launch), and we wait for
    // it with the caller's deadline: a child that runs in our memory until its execve
    // (body_execs) is visible inside, where root may stop it (kill -STOP -1).
    HelperStack stack;
    if (stack.base == MAP_FAILED) return fail(sys_error("mmap", "join helper stack"));
    std::optional<HelperStack> body_stack;
    if (spec.body_execs && body_stack.emplace().base == MAP_FAILED) return fail(sys_error("mmap", "exec child stack"));
    std::vector<int> keep = spec.keep_fds;
    keep.insert(keep.end(), {pidfd.get(), wr.get()});
    std::sort(keep.begin(), keep.end());
    std::string unified_procs = spec.cgroup_unified.empty() ? "" : spec.cgroup_unified + "/cgroup.procs";
    // Dumpability belongs to the memory map, which the helper shares and the child copies.
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    HelperArgs args{&spec, &keep, pidfd.get(), wr.get(), &body, &stack, body_stack ? &*body_stack : nullptr,
                    false, unified_procs.c_str(), {}, 0};
    // Started in the sandbox's group of the unified tree, where it has one: no write of
    // the helper's pid into it (clone_on_stack.h says what that would cost).
    Fd unified;
    if (!spec.cgroup_unified.empty())
        unified.reset(::open(spec.cgroup_unified.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    auto launch = std::make_shared<Launch>();
    launch->args = &args;
    launch->unified = unified ? unified.get() : -1;
    if (auto r = start_launch(*launch); !r) return fail(r.error());
    Waited waited = wait_for_helper(*launch, spec.timeout_ms);
    if (waited != Waited::done) end_helper(*launch);
    long h = launch->result;
    if (h < 0) {
        int clone_err = launch->err;
        // A group removed since we opened it (ENODEV) is a sandbox being destroyed.
        if (args.in_unified && clone_err == ENODEV)
            return fail(make_error(Code::not_running, "the sandbox's init process is gone"));
        return fail(errno_error(clone_err, args.in_unified ? "clone3" : "clone", "join helper"));
    }
    while (::waitpid(pid_t(h), nullptr, __WALL) < 0 && errno == EINTR) {
    }
    launch->close_done();
    // The helper is gone: our memory is ours alone again, but for its child while that
    // has not reached its execve (ended here if it must not).
    wr.reset();
    auto end_child = [&] {
        if (args.child <= 0) return;
        ::kill(-args.child, SIGKILL);  // its session, where it made one
        ::kill(args.child, SIGKILL);
        while (::waitpid(args.child, nullptr, __WALL) < 0 && errno == EINTR) {
        }
    };
    if (waited == Waited::timed_out) {
        end_child();
        return fail(make_error(Code::timed_out, "not started within " + std::to_string(spec.timeout_ms) + " ms"));
    }
    if (waited == Waited::interrupted) {
        end_child();
        return fail(interrupted_error());
    }
    // A report is there unless the helper was killed from outside before it wrote one.
    if (!readable(rd.get(), 0)) end_child();
    auto reported = read_report(rd.get(), "entering sandbox init " + std::to_string(spec.init_pid));
    if (!reported) {
        end_child();
        if (reported.error().err == ESRCH) return fail(make_error(Code::not_running, "the sandbox's init process is gone"));
        return fail(reported.error());
    }
    Joined j{*reported, Fd(int(::syscall(SYS_pidfd_open, *reported, 0)))};
    if (!j.pidfd) {
        Error e = sys_error("pidfd_open", std::to_string(*reported));
        end_child();
        return fail(std::move(e));
    }
    j.parent_thread = std::move(launch);
    return j;
}

}  // namespace dsec::ns
