// Work left behind: what a command finishes in a child of its own once it has exited, so
// that its caller, waiting for the exit, does not wait for that work too.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <utility>

#include "dsec/ns/confine.h"
#include "dsec/ns/helper_stack.h"
#include "commands.h"

namespace dsec::run_tool {

void leave_caller(int null, int wait_fd, std::span<const int> keep) {
    ::setsid();
    for (int fd = 0; fd < 3; fd++) ::dup2(null, fd);
    // Our stdio (now /dev/null), `keep` and `wait_fd`, in ascending order as
    // dsec_close_all_but needs, built without allocating: this may run in the parent's
    // memory while the parent still runs.
    int kept[3 + kMaxKept + 1];
    size_t n = 0;
    for (int fd = 0; fd < 3; fd++) kept[n++] = fd;
    for (size_t i = 0; i < keep.size() && i < kMaxKept; i++) kept[n++] = keep[i];
    kept[n++] = wait_fd;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && kept[j - 1] > kept[j]; j--) std::swap(kept[j - 1], kept[j]);
    dsec_close_all_but(kept, n);
    char c;
    while (::read(wait_fd, &c, 1) < 0 && errno == EINTR) {
    }
    ::close(wait_fd);
}

namespace {
struct Behind {
    const std::function<void()>* work;
    std::span<const int> keep;
    int gone;  // read end of a pipe whose write end closes (in us) as we exit
    int null;  // /dev/null
};

[[noreturn]] void work_behind(const Behind& b) {
    // It starts once we have gone: on a host of few CPUs it would otherwise slow our
    // exit, which is what the caller waits for. (It stays in our working directory: the
    // work may name paths relative to it.)
    leave_caller(b.null, b.gone, b.keep);
    (*b.work)();
    ::_exit(0);
}

int work_behind_entry(void* p) { work_behind(*static_cast<Behind*>(p)); }
}  // namespace

// The child (dsec-teardown) is in a session of its own, on /dev/null (a caller reading our
// output to its end does not wait for it), and goes to the reaper above us. It runs in our
// memory (no page tables copied: 0.15 to 0.25 ms a fork here), which is its alone once we
// have exited, as we do without touching it.
void exit_leaving(int code, const std::function<void()>& work, std::span<const int> keep) {
    std::cout.flush();
    std::cerr.flush();
    if (cli::interrupted()) return;
    Fd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
    int gone[2];
    if (!null || ::pipe2(gone, 0) < 0) return;
    Behind b{&work, keep, gone[0], null.get()};
    // Named before the clone, so that whoever looks for the child finds it by name from
    // its first moment (we exit next).
    ::prctl(PR_SET_NAME, "dsec-teardown", 0, 0, 0);
#ifdef DSEC_HELPER_STACK_ASAN
    // AddressSanitizer's leak check at our exit would scan memory the child changes.
    pid_t child = ::fork();
    if (child == 0) work_behind(b);
#else
    constexpr size_t kStack = 1 << 20;
    void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    pid_t child = -1;
    if (stack != MAP_FAILED)
        child = ::clone(work_behind_entry, static_cast<char*>(stack) + kStack, CLONE_VM | SIGCHLD, &b);
    if (child < 0 && stack != MAP_FAILED) ::munmap(stack, kStack);
#endif
    if (child > 0) ::_exit(cli::exit_code(code));
    ::prctl(PR_SET_NAME, "dsec-run", 0, 0, 0);
    ::close(gone[0]);
    ::close(gone[1]);
}

void exit_leaving_remains(int code, sandbox::Remains& remains) {
    int held[] = {remains.mnt.get(), remains.net.get()};
    exit_leaving(code, [&remains] { (void)remains.finish(); }, held);
}

}  // namespace dsec::run_tool
