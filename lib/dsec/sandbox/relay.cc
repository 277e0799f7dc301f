#include "dsec/sandbox/relay.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "dsec/ns/confine.h"
#include "dsec/sys/paths.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/log.h"
#include "dsec/sys/sha256.h"
#include "dsec/sys/fdpass.h"
#include "dsec/sys/fs.h"

namespace dsec::sandbox {

namespace {
using Clock = std::chrono::steady_clock;
// How long output is still read after the command exits, for background processes that
// keep its streams open.
constexpr auto kDrainGrace = std::chrono::milliseconds(100);

std::atomic<bool> winch{false};
void on_winch(int) { winch = true; }

// The terminal the window size comes from: our stdin's, else our stdout's; -1: none.
int our_terminal() {
    if (::isatty(STDIN_FILENO)) return STDIN_FILENO;
    return ::isatty(STDOUT_FILENO) ? STDOUT_FILENO : -1;
}

void copy_winsize(int from, int to) {
    struct winsize ws;
    if (::ioctl(from, TIOCGWINSZ, &ws) == 0) ::ioctl(to, TIOCSWINSZ, &ws);
}

// Raw mode on the host terminal for the life of a -t exec that relays it: keys (^C, ^D,
// ^Z) go to the command's terminal as bytes, to be acted on there.
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
    Fd* fd;    // our read end (in Io)
    int sink;  // where streamed output goes
    std::string* keep;
    bool* truncated;
    uint64_t* count;  // every byte, for the command log
    Sha256 hash = {};
    bool open = true;
};

// Reads what is there; returns false at EOF (EIO on a pty master whose slave closed).
bool pump(Stream& s, const ExecOptions& o) {
    char buf[65536];
    ssize_t n = ::read(s.fd->get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) return false;
    *s.count += uint64_t(n);
    // Streamed output is kept and hashed too, for the command log, when there is one.
    if (o.log) s.hash.update(buf, size_t(n));
    if (o.capture || o.log) {
        size_t limit = o.capture ? o.output_limit : kLogOutputCap;
        size_t room = limit > s.keep->size() ? limit - s.keep->size() : 0;
        s.keep->append(buf, std::min(room, size_t(n)));
        if (size_t(n) > room) *s.truncated = true;
    }
    if (!o.capture) {
        auto w = fs::write_all(s.sink, std::string_view(buf, size_t(n)));
        // Whoever read our output has gone (`dsec-run exec ... | head`): closing the
        // command's stream gives it EPIPE/SIGPIPE in turn, as in a shell pipeline.
        if (!w && w.error().err == EPIPE) {
            s.fd->reset();
            return false;
        }
    }
    return true;
}

// Our stdin copied into the command's: into its pipe, or into the pty master with -t.
// Reads only while the buffer has room and writes without blocking, so a command that
// never reads cannot stall the loop, and one that closes its stdin ends the relay
// (EPIPE) quietly. At EOF the pipe is closed.
//
// A pty has no half-close: EOF is the terminal's EOF character, which ends one read
// only, and which a line editor (ash, readline) only takes as EOF in raw mode, at an
// empty line, while typed before it switched to raw mode it reads as a NUL. So once our
// input has ended and the command has taken all of it, an EOF character is typed, in
// the mode the terminal is in then, and typed again whenever the command has taken it
// and is still there: its reads keep ending as they would on a closed pipe.
class StdinRelay {
public:
    StdinRelay(Io& io, bool wanted) : io_(io), tty_(bool(io.master)) {
        if (!wanted) end_of_input();
    }
    /// What to poll for POLLIN: our stdin while more is wanted, else -1.
    int read_fd() const { return reading_ && target() >= 0 && buffered() < kRelayBuffer ? STDIN_FILENO : -1; }
    /// What to poll for POLLOUT: the command's stdin while there is something to write.
    int write_fd() const { return buffered() ? target() : -1; }

    void read_some() {
        char buf[kRelayBuffer];
        ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
        // A read error (EIO from a hung-up terminal, EBADF from a closed stdin) ends the
        // input like EOF does.
        if (n <= 0) return end_of_input();
        if (sent_) {
            pending_.erase(0, sent_);
            sent_ = 0;
        }
        pending_.append(buf, size_t(n));
        at_line_start_ = buf[n - 1] == '\n' || buf[n - 1] == '\r';
    }

    void write_some() {
        ssize_t n = ::write(target(), pending_.data() + sent_, pending_.size() - sent_);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) return;
            // EPIPE: the command closed its stdin; EIO: the pty's other side is gone.
            return stop();
        }
        sent_ += size_t(n);
        written_ += uint64_t(n);
        if (buffered()) return;
        pending_.clear();
        sent_ = 0;
        if (!reading_ && !tty_) io_.in_w.reset();  // the command now reads EOF
    }

    /// With a pty whose input has ended: types the EOF character if the command has
    /// taken everything. Returns when to look again (none: at the next wake-up).
    std::optional<Clock::time_point> type_eof(Clock::time_point now) {
        if (!tty_ || reading_ || stopped_ || !io_.master || buffered()) return std::nullopt;
        if (now < next_eof_) return next_eof_;
        if (!probe_ && !typed_) {
            // The slave side, opened through the master (no path), to see what is unread.
            probe_.reset(::ioctl(io_.master.get(), TIOCGPTPEER, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
        }
        if (!probe_ && typed_) return std::nullopt;  // no TIOCGPTPEER (before 4.13): once only
        next_eof_ = now + kEofRetype;
        pollfd unread = {probe_.get(), POLLIN, 0};
        if (probe_ && ::poll(&unread, 1, 0) == 1 && (unread.revents & POLLIN)) return next_eof_;
        struct termios t;
        bool canonical = true;
        char veof = '\x04';
        if (::tcgetattr(io_.master.get(), &t) == 0) {
            canonical = t.c_lflag & ICANON;
            if (t.c_cc[VEOF] != _POSIX_VDISABLE) veof = char(t.c_cc[VEOF]);
        }
        // Mid-line the first one only hands over the partial line.
        if (canonical && !at_line_start_) pending_ += veof;
        pending_ += veof;
        at_line_start_ = typed_ = true;
        return std::nullopt;
    }

    /// Bytes the command was given.
    uint64_t written() const { return written_; }

    /// Nothing more goes in (the command has exited or refuses input).
    void stop() {
        reading_ = false;
        stopped_ = true;
        pending_.clear();
        sent_ = 0;
        io_.in_w.reset();
        probe_.reset();  // else the master would never see the slave side close
    }

private:
    static constexpr size_t kRelayBuffer = 65536;
    // How often the EOF character is typed again while the command keeps reading.
    static constexpr auto kEofRetype = std::chrono::milliseconds(100);

    int target() const { return tty_ ? io_.master.get() : io_.in_w.get(); }
    size_t buffered() const { return pending_.size() - sent_; }

    void end_of_input() {
        reading_ = false;
        if (!tty_ && !buffered()) io_.in_w.reset();
    }

    Io& io_;
    bool tty_;
    bool reading_ = true, stopped_ = false;
    bool at_line_start_ = true;
    bool typed_ = false;  // an EOF character has been typed
    std::string pending_;
    size_t sent_ = 0;  // how much of pending_ is written
    uint64_t written_ = 0;
    Fd probe_;
    Clock::time_point next_eof_;
};

// SIGPIPE held back in this thread, so that EPIPE is handled where it happens whatever
// the process's disposition; one raised meanwhile is taken off before the mask returns.
class PipeSignalBlocked {
public:
    PipeSignalBlocked() {
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        ::pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    }
    ~PipeSignalBlocked() {
        if (sigismember(&old_, SIGPIPE)) return;
        struct timespec zero = {};
        while (::sigtimedwait(&pipe_, nullptr, &zero) == SIGPIPE) {
        }
        ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }

private:
    sigset_t pipe_, old_;
};

void set_status(ExecResult& r, int code, int status) {
    if (code == CLD_EXITED) {
        r.exit_code = status;
    } else {
        r.signal = status;
        r.exit_code = 128 + status;
    }
}

// The end of `child`: from waitid when it is ours, else as its parent, the sandbox's
// init, reports it (an init gone without a word: killed with its sandbox). False while
// there is nothing to take yet.
bool take_status(const ns::Joined& child, ExecResult& r) {
    if (!child.ended) {
        siginfo_t info = {};
        if (::waitid(P_PID, id_t(child.pid), &info, WEXITED) != 0) return false;
        set_status(r, info.si_code, info.si_status);
        return true;
    }
    dsec_exec_ended ended = {};
    ssize_t n = ::recv(child.ended.get(), &ended, sizeof ended, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return false;
    if (n == ssize_t(sizeof ended) || n == ssize_t(offsetof(dsec_exec_ended, flags))) {
        set_status(r, ended.code, ended.status);
        r.init_left = (ended.flags & DSEC_EXEC_INIT_LEAVES) != 0;
    } else {
        set_status(r, CLD_KILLED, SIGKILL);
    }
    return true;
}
}  // namespace

Result<Io> Io::make(const ExecOptions& o) {
    Io io;
    if (o.tty) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return fail(sys_error("socketpair"));
        io.pty_sock.reset(sv[0]);
        io.pty_sock_child.reset(sv[1]);
        if (int term = our_terminal(); term >= 0) ::ioctl(term, TIOCGWINSZ, &io.size);
        return io;
    }
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    io.out_r.reset(p[0]);
    io.out_w.reset(p[1]);
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    io.err_r.reset(p[0]);
    io.err_w.reset(p[1]);
    if (o.input == Stdin::relay) {
        if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
        io.in_r.reset(p[0]);
        io.in_w.reset(p[1]);
        // Only our end: the command's read end is a file description of its own.
        if (::fcntl(io.in_w.get(), F_SETFL, O_NONBLOCK) < 0) return fail(sys_error("fcntl", "O_NONBLOCK"));
    } else {
        io.in_r.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (!io.in_r) return fail(sys_error("open", "/dev/null"));
    }
    io.child_in = io.in_r.get();
    io.child_out = io.out_w.get();
    io.child_err = io.err_w.get();
    return io;
}

Status Io::receive_master() {
    pty_sock_child.reset();
    char byte;
    // Until the child sends it, or closes its end by exec'ing or dying without (EOF).
    Fd fd;
    if (recv_fd(pty_sock.get(), &byte, 1, fd) != 1 || !fd)
        return fail(make_error(Code::io, "no terminal from inside the sandbox"));
    master = std::move(fd);
    pty_sock.reset();
    if (::fcntl(master.get(), F_SETFL, O_NONBLOCK) < 0) return fail(sys_error("fcntl", "O_NONBLOCK"));
    return {};
}

int open_pty_inside(int sock, uid_t uid, const struct winsize& size, int* master_kept) {
    // The sandbox's /dev/ptmx (its devpts, a new instance), not the host's.
    int m = ::open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0) return -1;
    int unlock = 0;
    int s = -1;
    if (::ioctl(m, TIOCSPTLCK, &unlock) == 0) s = ::ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (s < 0 || ::fchown(s, uid, gid_t(-1)) < 0) {
        int e = errno;
        ::close(m);
        errno = e;
        return -1;
    }
    if (size.ws_row && size.ws_col) ::ioctl(m, TIOCSWINSZ, &size);
    char byte = 0;
    struct iovec iov = {&byte, 1};
    ssize_t sent = send_fds(sock, &iov, 1, &m, 1);
    int e = errno;
    if (master_kept) *master_kept = ::fcntl(m, F_DUPFD_CLOEXEC, 10);
    ::close(m);
    if (sent != 1 || ::ioctl(s, TIOCSCTTY, 0) < 0) {
        if (sent != 1) errno = e;
        return -1;
    }
    // Our stdio is closed (the helper kept only what it needs), so the pty may have landed
    // on 0-2: moved above them, so that dup2 onto 0-2 makes real copies without CLOEXEC.
    int high = ::fcntl(s, F_DUPFD_CLOEXEC, 3);
    ::close(s);
    return high;
}

void Io::close_child_ends() {
    in_r.reset();
    out_w.reset();
    err_w.reset();
    pty_sock_child.reset();
}

Result<ExecResult> supervise(const ns::Joined& child, Io& io, const ExecOptions& o,
                             const std::function<void()>& kill_tree) {
    ExecResult r;
    PipeSignalBlocked no_sigpipe;
    bool relay = o.input == Stdin::relay;
    // Raw mode only when our stdin is the terminal being relayed; a pipe or file on
    // stdin leaves the terminal (if any) alone.
    std::optional<RawMode> raw;
    struct sigaction old_winch = {};
    bool follow_winch = o.tty && our_terminal() >= 0;
    if (o.tty && relay && ::isatty(STDIN_FILENO)) raw.emplace();
    if (follow_winch) {
        struct sigaction sa = {};
        sa.sa_handler = on_winch;
        ::sigaction(SIGWINCH, &sa, &old_winch);
    }
    std::vector<Stream> streams;
    if (o.tty) streams.push_back({&io.master, STDOUT_FILENO, &r.out, &r.out_truncated, &r.out_bytes});
    else {
        streams.push_back({&io.out_r, STDOUT_FILENO, &r.out, &r.out_truncated, &r.out_bytes});
        streams.push_back({&io.err_r, STDERR_FILENO, &r.err, &r.err_truncated, &r.err_bytes});
    }
    StdinRelay input(io, relay);
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
        if (!exited_at)
            if (auto again = input.type_eof(now)) wake = std::min(wake, *again);
        int wait_ms = wake == Clock::time_point::max()
                          ? -1
                          : int(std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1));
        // [0] the child, [1..] its output streams, then our stdin and the command's.
        std::vector<pollfd> pfds;
        pfds.push_back({exited_at ? -1 : child.ended ? child.ended.get() : child.pidfd.get(), POLLIN, 0});
        for (auto& s : streams) pfds.push_back({s.open ? s.fd->get() : -1, POLLIN, 0});
        size_t in_at = pfds.size();
        pfds.push_back({input.read_fd(), POLLIN, 0});
        pfds.push_back({input.write_fd(), POLLOUT, 0});
        int n = ::poll(pfds.data(), pfds.size(), wait_ms);
        if (n < 0 && errno != EINTR) return fail(sys_error("poll"));
        if (interrupted()) kill_once();
        if (winch.exchange(false) && io.master) copy_winsize(our_terminal(), io.master.get());
        for (size_t i = 0; n > 0 && i < streams.size(); i++)
            if (pfds[i + 1].revents) {
                if (!pump(streams[i], o)) streams[i].open = false;
                else last_output = Clock::now();
            }
        if (n > 0 && pfds[in_at].revents) input.read_some();
        if (n > 0 && pfds[in_at + 1].revents) input.write_some();
        if (n > 0 && pfds[0].revents) {
            if (take_status(child, r)) {
                exited_at = Clock::now();
                // What is still unread stays unread: nobody is left to take it (a
                // background process that kept the pipe sees EOF).
                input.stop();
            }
        }
        // Deadlines are checked on every pass: busy output or input never lets poll
        // time out.
        now = Clock::now();
        if (exited_at || killed) continue;
        bool over_time = o.timeout_ms && now >= start + std::chrono::milliseconds(o.timeout_ms);
        bool too_quiet = o.no_output_timeout_ms && now >= last_output + std::chrono::milliseconds(o.no_output_timeout_ms);
        if (over_time || too_quiet) {
            r.timed_out = true;
            r.note = over_time ? "timed out after " + format_duration_ms(o.timeout_ms)
                               : "timed out after " + format_duration_ms(o.no_output_timeout_ms) + " without output";
            kill_once();
        }
    }
    if (follow_winch) ::sigaction(SIGWINCH, &old_winch, nullptr);
    r.in_bytes = input.written();
    if (o.log) {
        r.out_sha256 = streams[0].hash.hex();
        r.err_sha256 = streams.size() > 1 ? streams[1].hash.hex() : Sha256().hex();
    }
    return r;
}

}  // namespace dsec::sandbox
