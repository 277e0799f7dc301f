#include "dsec/snapshot/freeze.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "dsec/sys/process.h"

namespace dsec::snapshot {

namespace {
constexpr const char* kMark = "snapshot";

// The watchdog: waits for the holder's word; end of file without it means the holder
// died with the sandbox frozen.
[[noreturn]] void watch(int done_fd, const cgroup::Cgroup& cg) {
    ::setsid();
    // Nothing of the holder's stays open here: not its stdout (a pipeline would wait for
    // us), not the sandbox's lock or the staging directory's.
    int null = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3 && null >= 0; fd++) ::dup2(null, fd);
    if (::dup2(done_fd, 3) < 0) ::_exit(1);
    ::close_range(4, ~0U, 0);
    char byte;
    ssize_t n;
    while ((n = ::read(3, &byte, 1)) < 0 && errno == EINTR) {
    }
    if (n <= 0) (void)cg.thaw();
    ::_exit(0);
}
}  // namespace

Result<Freeze> Freeze::start(const sandbox::Paths& paths, sandbox::State& state, const cgroup::Cgroup& cg) {
    Freeze f(paths, state, cg);
    // Paused already (dsec-reclaim): consistent as it is, and it stays paused afterwards.
    if (cg.frozen()) return f;
    int pipe[2];
    if (::pipe2(pipe, O_CLOEXEC) < 0) return fail(sys_error("pipe", "watchdog"));
    Fd read_end(pipe[0]);
    f.watchdog_.reset(pipe[1]);
    f.active_ = true;
    state.extra[kMark] = {{"pid", ::getpid()}, {"pid_start", proc::process_start(::getpid())}};
    if (auto r = sandbox::save(paths, state); !r) return fail(r.error());
    pid_t pid = ::fork();
    if (pid < 0) return fail(sys_error("fork", "watchdog"));
    if (pid == 0) {
        f.watchdog_.reset();
        watch(read_end.get(), cg);
    }
    f.watchdog_pid_ = pid;
    f.froze_ = true;
    if (auto r = cg.freeze(); !r) return fail(r.error());
    return f;
}

Freeze::Freeze(Freeze&& o) noexcept
    : paths_(o.paths_), state_(o.state_), cg_(o.cg_), froze_(std::exchange(o.froze_, false)),
      active_(std::exchange(o.active_, false)), watchdog_(std::move(o.watchdog_)),
      watchdog_pid_(std::exchange(o.watchdog_pid_, -1)) {}

Freeze::~Freeze() { (void)end(); }

Status Freeze::end() {
    if (!active_) return {};
    active_ = false;
    Status thawed = froze_ ? cg_->thaw() : Status{};
    if (thawed && watchdog_) {
        char done = 1;
        while (::write(watchdog_.get(), &done, 1) < 0 && errno == EINTR) {
        }
    }
    // On a failed thaw the watchdog sees end of file and tries once more.
    watchdog_.reset();
    if (watchdog_pid_ > 0)
        while (::waitpid(watchdog_pid_, nullptr, 0) < 0 && errno == EINTR) {
        }
    watchdog_pid_ = -1;
    state_->extra.erase(kMark);
    Status saved = sandbox::save(*paths_, *state_);
    return !thawed ? thawed : saved;
}

Result<bool> thaw_abandoned(const sandbox::Paths& paths, sandbox::State& state, const cgroup::Cgroup& cg) {
    auto mark = state.extra.find(kMark);
    if (mark == state.extra.end()) return false;
    if (mark->is_object() && proc::process_alive(mark->value("pid", 0), mark->value("pid_start", 0ULL))) return false;
    if (auto r = cg.thaw(); !r) return fail(r.error());
    state.extra.erase(kMark);
    if (auto r = sandbox::save(paths, state); !r) return fail(r.error());
    return true;
}

}  // namespace dsec::snapshot
