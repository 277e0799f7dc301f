#include "dsec/ns/spawn.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dsec::ns {

namespace {
// Descriptors the child renumbers to 3 and 4 are first moved above this, so that dup2
// never overwrites one it still needs.
constexpr int kHighFd = 64;

// Writes "op\t\terrno\n" like dsec-init does, then exits. Only raw syscalls: this runs
// in a child cloned from a possibly multi-threaded parent.
[[noreturn]] void child_fail(int status_fd, const char* op) {
    int err = errno;
    char buf[96];
    size_t n = 0;
    for (const char* p = op; *p && n < 60; p++) buf[n++] = *p;
    buf[n++] = '\t';
    buf[n++] = '\t';
    char digits[12];
    int d = 0;
    do digits[d++] = char('0' + err % 10); while ((err /= 10) && d < 11);
    while (d) buf[n++] = digits[--d];
    buf[n++] = '\n';
    (void)!::write(status_fd, buf, n);
    ::_exit(127);
}

[[noreturn]] void run_child(const InitSpec& spec, int status_fd, int devnull, char* const* argv) {
    for (int fd : spec.join_fds)
        if (::write(fd, "0", 1) < 0) child_fail(status_fd, "join cgroup");
    if (::unshare(CLONE_NEWCGROUP) < 0) child_fail(status_fd, "unshare cgroup namespace");
    if (::dup2(devnull, 0) < 0 || ::dup2(devnull, 1) < 0 || ::dup2(devnull, 2) < 0) child_fail(status_fd, "dup2");
    if (::dup2(spec.mount_fd, 3) < 0 || ::dup2(status_fd, 4) < 0) child_fail(status_fd, "dup2");
    if (spec.keep_fd >= 0 && ::dup2(spec.keep_fd, 5) < 0) child_fail(status_fd, "dup2");
    ::syscall(SYS_close_range, spec.keep_fd >= 0 ? 6U : 5U, ~0U, 0U);
    char* envp[] = {nullptr};
    ::execve(spec.program.c_str(), argv, envp);
    child_fail(4, "execve dsec-init");
}

// Reads the init's one status line. "ok" or "op\tpath\terrno".
Status read_status(int fd, const std::string& program) {
    std::string line;
    char buf[512];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        line.append(buf, size_t(n));
        if (line.find('\n') != std::string::npos) break;
    }
    if (line == "ok\n") return {};
    if (line.empty()) return fail(make_error("init_failed", "sandbox init exited before it was ready", program));
    line.erase(line.find('\n'));
    auto t1 = line.find('\t');
    auto t2 = t1 == std::string::npos ? std::string::npos : line.find('\t', t1 + 1);
    if (t2 == std::string::npos) return fail(make_error("init_failed", "sandbox init: " + line, program));
    Error e = errno_error(std::atoi(line.c_str() + t2 + 1), line.substr(0, t1), line.substr(t1 + 1, t2 - t1 - 1));
    return fail(std::move(e).context("setting up the sandbox"));
}
}  // namespace

int sandbox_namespaces() { return CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS; }

Result<Started> start_init(const InitSpec& spec) {
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    Fd status_r(pipefd[0]), status_w(pipefd[1]);
    Fd high_w(::fcntl(status_w.get(), F_DUPFD_CLOEXEC, kHighFd));
    Fd high_mount(::fcntl(spec.mount_fd, F_DUPFD_CLOEXEC, kHighFd));
    Fd high_keep(spec.keep_fd >= 0 ? ::fcntl(spec.keep_fd, F_DUPFD_CLOEXEC, kHighFd) : -1);
    Fd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!high_w || !high_mount || !devnull) return fail(sys_error("fcntl", "F_DUPFD_CLOEXEC"));
    status_w.reset();
    InitSpec child_spec = spec;
    child_spec.mount_fd = high_mount.get();
    child_spec.keep_fd = high_keep.get();

    // Everything the child touches is prepared here: it may not allocate.
    std::vector<char*> argv;
    for (auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    int pidfd = -1;
    struct clone_args args;
    std::memset(&args, 0, sizeof args);
    args.flags = uint64_t(sandbox_namespaces()) | CLONE_PIDFD;
    args.pidfd = uint64_t(uintptr_t(&pidfd));
    args.exit_signal = SIGCHLD;
    if (spec.unified_cgroup_fd >= 0) {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = uint64_t(spec.unified_cgroup_fd);
    }
    long pid = ::syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0) return fail(sys_error("clone3", "new namespaces"));
    if (pid == 0) run_child(child_spec, high_w.get(), devnull.get(), argv.data());

    Started started{int(pid), Fd(pidfd)};
    high_w.reset();
    if (auto st = read_status(status_r.get(), spec.program); !st) {
        ::kill(started.pid, SIGKILL);
        ::waitpid(started.pid, nullptr, 0);
        return fail(st.error());
    }
    return started;
}

}  // namespace dsec::ns
