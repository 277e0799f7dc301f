#include "dsec/sandbox/relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "dsec/cli/cli.h"
#include "dsec/sys/fs.h"

namespace dsec::sandbox {

namespace {
using Clock = std::chrono::steady_clock;
// How long output is still read after the command exits, for background processes that
// keep its streams open.
constexpr auto kDrainGrace = std::chrono::milliseconds(100);

std::atomic<bool> winch{false};
void on_winch(int) { winch = true; }

void copy_winsize(int from, int to) {
    struct winsize ws;
    if (::ioctl(from, TIOCGWINSZ, &ws) == 0) ::ioctl(to, TIOCSWINSZ, &ws);
}

// Raw mode on the host terminal for the life of a -t exec.
class RawMode {
public:
    RawMode() {
        if (::isatty(STDIN_FILENO) && ::tcgetattr(STDIN_FILENO, &saved_) == 0) {
            struct termios raw = saved_;
            ::cfmakeraw(&raw);
            active_ = ::tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0;
        }
    }
    ~RawMode() {
        if (active_) ::tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_);
    }

private:
    struct termios saved_;
    bool active_ = false;
};

// One output stream: captured up to the limit (the rest read and dropped) or streamed.
struct Stream {
    int fd;
    int sink;  // where streamed output goes
    std::string* keep;
    bool* truncated;
    bool open = true;
};

// Reads what is there; returns false at EOF (EIO on a pty master whose slave closed).
bool pump(Stream& s, const ExecOptions& o) {
    char buf[65536];
    ssize_t n = ::read(s.fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) return false;
    if (!o.capture) {
        (void)fs::write_all(s.sink, std::string_view(buf, size_t(n)));
        return true;
    }
    size_t room = o.output_limit > s.keep->size() ? o.output_limit - s.keep->size() : 0;
    s.keep->append(buf, std::min(room, size_t(n)));
    if (size_t(n) > room) *s.truncated = true;
    return true;
}

void set_status(ExecResult& r, const siginfo_t& info) {
    if (info.si_code == CLD_EXITED) {
        r.exit_code = info.si_status;
    } else {
        r.signal = info.si_status;
        r.exit_code = 128 + info.si_status;
    }
}
}  // namespace

Result<Io> Io::make(const ExecOptions& o) {
    Io io;
    if (o.tty) {
        io.master.reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
        if (!io.master || ::grantpt(io.master.get()) < 0 || ::unlockpt(io.master.get()) < 0)
            return fail(sys_error("posix_openpt"));
        char name[128];
        if (::ptsname_r(io.master.get(), name, sizeof name) != 0) return fail(sys_error("ptsname"));
        io.slave.reset(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
        if (!io.slave) return fail(sys_error("open", name));
        if (::isatty(STDIN_FILENO)) copy_winsize(STDIN_FILENO, io.master.get());
        io.child_in = io.child_out = io.child_err = io.tty_slave = io.slave.get();
        return io;
    }
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    io.out_r.reset(p[0]);
    io.out_w.reset(p[1]);
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    io.err_r.reset(p[0]);
    io.err_w.reset(p[1]);
    io.child_out = io.out_w.get();
    io.child_err = io.err_w.get();
    if (o.input == Stdin::null) {
        io.in_owned.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (!io.in_owned) return fail(sys_error("open", "/dev/null"));
        io.child_in = io.in_owned.get();
    } else {
        io.child_in = STDIN_FILENO;
    }
    return io;
}

void Io::close_child_ends() {
    in_owned.reset();
    out_w.reset();
    err_w.reset();
    slave.reset();
}

Result<ExecResult> supervise(const ns::Joined& child, Io& io, const ExecOptions& o,
                             const std::function<void()>& kill_tree) {
    ExecResult r;
    std::optional<RawMode> raw;
    struct sigaction old_winch = {};
    if (o.tty) {
        raw.emplace();
        struct sigaction sa = {};
        sa.sa_handler = on_winch;
        ::sigaction(SIGWINCH, &sa, &old_winch);
    }
    std::vector<Stream> streams;
    if (o.tty) streams.push_back({io.master.get(), STDOUT_FILENO, &r.out, &r.out_truncated});
    else {
        streams.push_back({io.out_r.get(), STDOUT_FILENO, &r.out, &r.out_truncated});
        streams.push_back({io.err_r.get(), STDERR_FILENO, &r.err, &r.err_truncated});
    }
    bool stdin_open = o.tty;
    auto start = Clock::now(), last_output = start;
    std::optional<Clock::time_point> exited_at;
    bool killed = false;
    auto kill_once = [&] {
        if (!killed) kill_tree();
        killed = true;
    };
    for (;;) {
        bool any_open = std::any_of(streams.begin(), streams.end(), [](const Stream& s) { return s.open; });
        auto now = Clock::now();
        if (exited_at && (!any_open || now >= *exited_at + kDrainGrace)) break;
        // The nearest deadline decides how long poll may sleep.
        auto wake = Clock::time_point::max();
        if (exited_at) wake = *exited_at + kDrainGrace;
        else if (!killed) {
            if (o.timeout_ms) wake = std::min(wake, start + std::chrono::milliseconds(o.timeout_ms));
            if (o.no_output_timeout_ms) wake = std::min(wake, last_output + std::chrono::milliseconds(o.no_output_timeout_ms));
        }
        int wait_ms = wake == Clock::time_point::max()
                          ? -1
                          : int(std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1));
        std::vector<pollfd> pfds;
        pfds.push_back({exited_at ? -1 : child.pidfd.get(), POLLIN, 0});
        for (auto& s : streams) pfds.push_back({s.open ? s.fd : -1, POLLIN, 0});
        pfds.push_back({stdin_open ? STDIN_FILENO : -1, POLLIN, 0});
        int n = ::poll(pfds.data(), pfds.size(), wait_ms);
        if (n < 0 && errno != EINTR) return fail(sys_error("poll"));
        if (cli::interrupted()) kill_once();
        if (winch.exchange(false) && io.master) copy_winsize(STDIN_FILENO, io.master.get());
        if (n <= 0) {
            now = Clock::now();
            if (!exited_at && !killed &&
                ((o.timeout_ms && now >= start + std::chrono::milliseconds(o.timeout_ms)) ||
                 (o.no_output_timeout_ms && now >= last_output + std::chrono::milliseconds(o.no_output_timeout_ms)))) {
                r.timed_out = true;
                kill_once();
            }
            continue;
        }
        for (size_t i = 0; i < streams.size(); i++)
            if (pfds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) {
                if (!pump(streams[i], o)) streams[i].open = false;
                else last_output = Clock::now();
            }
        if (pfds.back().revents & (POLLIN | POLLHUP | POLLERR)) {
            char buf[4096];
            ssize_t got = ::read(STDIN_FILENO, buf, sizeof buf);
            if (got <= 0) stdin_open = false;
            else (void)fs::write_all(io.master.get(), std::string_view(buf, size_t(got)));
        }
        if (pfds[0].revents & POLLIN) {
            siginfo_t info = {};
            if (::waitid(P_PID, id_t(child.pid), &info, WEXITED) == 0) {
                set_status(r, info);
                exited_at = Clock::now();
            }
        }
    }
    if (o.tty) ::sigaction(SIGWINCH, &old_winch, nullptr);
    return r;
}

}  // namespace dsec::sandbox
