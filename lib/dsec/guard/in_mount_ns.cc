#include "dsec/guard/in_mount_ns.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "dsec/sys/process.h"
#include "dsec/ns/confine.h"
#include "dsec/ns/confinement.h"
#include "dsec/ns/helper_stack.h"
#include "dsec/sys/fd.h"

namespace dsec::guard {

namespace {
struct HelperArgs {
    MountNsWork work;
    void* arg;
    int pidfd;
    int report_fd;
    ns::HelperStack* stack;
};

int helper_entry(void* p) {
    auto* a = static_cast<HelperArgs*>(p);
    a->stack->entered();
    if (::setns(a->pidfd, CLONE_NEWNS) < 0) {
        dsec_send_report(a->report_fd, errno, 0, "setns", "mount namespace");
        ::_exit(1);
    }
    a->work(a->arg, a->report_fd);
    ::_exit(1);
}
}  // namespace

Status in_mount_namespace(int init_pid, unsigned long long init_start, MountNsWork work, void* arg, const char* what) {
    Fd pidfd(int(::syscall(SYS_pidfd_open, init_pid, 0)));
    if (!pidfd || !proc::process_alive(init_pid, init_start))
        return fail(make_error(Code::not_running, "the sandbox's init process is gone"));
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    Fd rd(p[0]), wr(p[1]);
    ns::HelperStack stack;
    if (stack.base == MAP_FAILED) return fail(sys_error("mmap", "mount namespace helper stack"));
    HelperArgs args{work, arg, pidfd.get(), wr.get(), &stack};
    pid_t h = ::clone(helper_entry, stack.top(), CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
    stack.returned();
    if (h < 0) return fail(sys_error("clone", "mount namespace helper"));
    wr.reset();
    auto reported = ns::read_report(rd.get(), what);
    while (::waitpid(h, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (!reported) return fail(reported.error());
    return {};
}

Result<Fd> open_init_root(int init_pid, unsigned long long init_start) {
    std::string path = "/proc/" + std::to_string(init_pid) + "/root";
    Fd root(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    // Checked after the open: the root is that of the init, not of a process that took
    // its pid since.
    if (!root || !proc::process_alive(init_pid, init_start))
        return fail(make_error(Code::not_running, "the sandbox's init process is gone"));
    return root;
}

}  // namespace dsec::guard
