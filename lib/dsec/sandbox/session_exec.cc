// One command in a session's shell: the script sent on its stdin, the loop that collects
// output until the command's nonce arrives on the status channel, timeouts.
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "dsec/sandbox/activity.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/log.h"
#include "dsec/sandbox/open.h"
#include "dsec/sandbox/session.h"
#include "dsec/sandbox/session_files.h"
#include "dsec/sandbox/session_protocol.h"
#include "dsec/sys/sha256.h"

namespace dsec::sandbox {

namespace {
using session_protocol::find_status;
using session_protocol::script;
using Clock = std::chrono::steady_clock;
// After the command's processes were killed at a timeout, how long the shell has to
// report the status before it is taken to be the one running (a loop in the shell).
constexpr auto kShellGrace = std::chrono::seconds(2);
// How much of the status channel is looked at: the last bytes, which hold our line.
constexpr size_t kStatusKept = 4096;
// Most reads of 64 KiB one emptying of a FIFO makes.
constexpr int kMaxReads = 16;

// The command's stdin and its outputs, opened from the host side. With a pty, `out` is
// the terminal's master and there is no `err` (the terminal carries both streams).
struct Ends {
    Fd in, out, err, status;
};

// A copy of the master of a pty session's terminal, taken from its shell (descriptor 8).
// A command may have closed or replaced that descriptor: whatever is there must be a
// pty master (any master reachable inside is on the sandbox's own devpts).
Result<Fd> shell_terminal(int shell_pidfd, const SessionRef& ref) {
    Fd master(int(::syscall(SYS_pidfd_getfd, shell_pidfd, 8, 0)));
    unsigned number = 0;
    if (!master || ::ioctl(master.get(), TIOCGPTN, &number) < 0)
        return fail(make_error(Code::io, "session \"" + ref.id() + "\" has lost its terminal (closed or replaced inside); close it",
                               ref.id()));
    // Shared with the shell's copy, which it never reads or writes itself.
    if (::fcntl(master.get(), F_SETFL, O_NONBLOCK) < 0) return fail(sys_error("fcntl", "O_NONBLOCK"));
    return master;
}

Result<Ends> open_ends(const std::string& dir, const SessionRef& ref, bool pty, int shell_pidfd) {
    Ends e;
    auto open = [&](Fd& fd, const char* name, int mode) -> Status {
        std::string path = dir + "/" + name;
        fd.reset(::open(path.c_str(), mode | O_NONBLOCK | O_CLOEXEC));
        if (!fd) return fail(sys_error("open", path));
        return {};
    };
    for (auto [fd, name, mode] : {std::tuple{&e.in, "in", O_WRONLY}, std::tuple{&e.status, "status", O_RDONLY}})
        if (auto r = open(*fd, name, mode); !r) return fail(r.error());
    if (pty) {
        auto master = shell_terminal(shell_pidfd, ref);
        if (!master) return fail(master.error());
        e.out = std::move(*master);
        return e;
    }
    for (auto [fd, name] : {std::pair{&e.out, "out"}, std::pair{&e.err, "err"}})
        if (auto r = open(*fd, name, O_RDONLY); !r) return fail(r.error());
    return e;
}

// One output stream of the command: kept up to the limit, counted and hashed whole.
struct Capture {
    std::string* keep;
    bool* truncated;
    uint64_t* bytes;
    Sha256 hash = {};
};

// Reads what is there into `c` (up to `limit` kept, the rest dropped); with `all`, until
// the FIFO is empty or kMaxReads reads were made (a writer that never stops, such as a
// background `yes`, must not hold us). Returns whether anything was read.
bool pump(int fd, Capture& c, size_t limit, bool all = false) {
    char buf[65536];
    bool got = false;
    for (int reads = 0; reads < kMaxReads; reads++) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return got;
        got = true;
        *c.bytes += uint64_t(n);
        c.hash.update(buf, size_t(n));
        size_t room = limit > c.keep->size() ? limit - c.keep->size() : 0;
        c.keep->append(buf, std::min(room, size_t(n)));
        if (size_t(n) > room) *c.truncated = true;
        if (!all) return got;
    }
    return got;
}

// Empties a FIFO of what came before this command (output of earlier background jobs).
void drain(int fd) {
    std::string dropped;
    bool truncated = false;
    uint64_t bytes = 0;
    Capture c{&dropped, &truncated, &bytes};
    pump(fd, c, 0, true);
}

// Reads the status channel (empty, or kMaxReads * 16 reads of it) and returns the status
// for `nonce` once its line is there. Only the last bytes are kept between reads, and
// each read is looked through before they are cut: junk written there from inside
// cannot push our line out.
std::optional<int> read_status(int fd, std::string& tail, const std::string& nonce) {
    char buf[4096];
    for (int reads = 0; reads < kMaxReads * 16; reads++) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        tail.append(buf, size_t(n));
        if (auto code = find_status(tail, nonce)) return code;
        if (tail.size() > kStatusKept) tail.erase(0, tail.size() - kStatusKept);
    }
    return find_status(tail, nonce);
}

int ms_until(Clock::time_point when, Clock::time_point now) {
    if (when == Clock::time_point::max()) return -1;
    return int(std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(when - now).count() + 1));
}
}  // namespace

Result<ExecResult> session_exec(const Paths& paths, const SessionRef& ref, const std::string& command,
                                const ExecOptions& o) {
    if (command.find('\0') != std::string::npos) return fail(make_error(Code::bad_input, "the command holds a NUL byte"));
    std::string dir = session_files::dir(paths, ref);
    if (!fs::exists(dir))
        return fail(make_error(Code::not_found, "no session \"" + ref.id() + "\" (unknown or closed)", ref.id()));
    // One command at a time per session: a second waits here.
    auto held = fs::lock(dir + "/lock");
    if (!held) return fail(held.error());
    auto record = session_files::load(paths, ref);
    if (!record) return fail(record.error());
    int shell = record->value("pid", 0);
    Fd pidfd(int(::syscall(SYS_pidfd_open, shell, 0)));
    if (!pidfd || !session_files::shell_alive(*record))
        return fail(make_error(Code::not_running, "session \"" + ref.id() + "\" has ended (its shell exited)", ref.id()));
    // Thaws a paused sandbox, and keeps it from counting as idle while the command runs.
    auto in_use = begin_use(paths, ref.sandbox);
    if (!in_use) return fail(in_use.error());
    // The sandbox as every exec opens it (running, in the cgroup create saved): its
    // cgroup holds the session's processes.
    auto opened = open_sandbox(paths, ref.sandbox, Need::running);
    if (!opened) return fail(opened.error());
    const cgroup::Cgroup* cg = &opened->cg;
    bool pty = record->value("pty", false);
    auto ends = open_ends(dir, ref, pty, pidfd.get());
    if (!ends) return fail(ends.error());
    for (int fd : {ends->out.get(), ends->err.get(), ends->status.get()})
        if (fd >= 0) drain(fd);
    // Background jobs of earlier commands survive this one's timeout.
    auto before = session_files::session_pids(*cg, shell);
    // Where the command starts, for the log: the shell's directory inside the sandbox.
    std::string cwd(4096, '\0');
    ssize_t cwd_len = ::readlink(("/proc/" + std::to_string(shell) + "/cwd").c_str(), cwd.data(), cwd.size());
    cwd.resize(size_t(std::max<ssize_t>(cwd_len, 0)));
    std::string nonce = random_hex(12);
    std::string pending = script(command, nonce, pty);
    size_t sent = 0;

    ExecResult r;
    Capture out{&r.out, &r.out_truncated, &r.out_bytes}, err{&r.err, &r.err_truncated, &r.err_bytes};
    std::string status;
    auto start = Clock::now(), last_output = start;
    std::optional<Clock::time_point> killed_at;
    bool shell_exited = false;
    std::optional<int> code;
    auto kill_command = [&](const std::string& why) {
        if (killed_at) return;
        r.note = why;
        // First the shell's URG, whose trap returns from the command (session_protocol): a
        // shell waiting for a process runs it as soon as that process dies, before the
        // next command of the list; one waiting in a builtin or looping, at once.
        ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGURG, nullptr, 0);
        session_files::kill_session_but(*cg, shell, before);
        killed_at = Clock::now();
    };
    while (!code && !shell_exited) {
        auto now = Clock::now();
        auto wake = Clock::time_point::max();
        if (killed_at) wake = *killed_at + kShellGrace;
        else {
            if (o.timeout_ms) wake = std::min(wake, start + std::chrono::milliseconds(o.timeout_ms));
            if (o.no_output_timeout_ms)
                wake = std::min(wake, last_output + std::chrono::milliseconds(o.no_output_timeout_ms));
        }
        pollfd pfds[5] = {{pidfd.get(), POLLIN, 0},
                          {ends->out.get(), POLLIN, 0},
                          {ends->err.get(), POLLIN, 0},
                          {ends->status.get(), POLLIN, 0},
                          {sent < pending.size() ? ends->in.get() : -1, POLLOUT, 0}};
        int n = ::poll(pfds, 5, ms_until(wake, now));
        if (n < 0 && errno != EINTR) return fail(sys_error("poll"));
        if (interrupted()) kill_command("interrupted");
        for (auto [pfd, fd, capture] : {std::tuple{&pfds[1], &ends->out, &out}, std::tuple{&pfds[2], &ends->err, &err}}) {
            if (n <= 0 || !pfd->revents) continue;
            if (pump(fd->get(), *capture, o.output_limit)) last_output = Clock::now();
            // A terminal whose every slave was closed inside: nothing more comes.
            else if (pfd->revents & (POLLHUP | POLLERR)) fd->reset();
        }
        if (n > 0 && pfds[3].revents && !code) code = read_status(ends->status.get(), status, nonce);
        if (n > 0 && pfds[4].revents) {
            ssize_t w = ::write(ends->in.get(), pending.data() + sent, pending.size() - sent);
            if (w > 0) sent += size_t(w);
        }
        if (n > 0 && pfds[0].revents) shell_exited = true;
        // A forged or stale line cannot match: the nonce is new for each command.
        now = Clock::now();
        if (killed_at) {
            // The command ran in the shell itself: only killing the shell stops it.
            if (!code && now >= *killed_at + kShellGrace) {
                ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
                session_files::kill_session_but(*cg, shell, {});
                r.note += "; the shell itself ran the command and was killed (the session has ended)";
                struct pollfd gone = {pidfd.get(), POLLIN, 0};
                (void)::poll(&gone, 1, 1000);
                shell_exited = true;
            }
            continue;
        }
        bool over_time = o.timeout_ms && now >= start + std::chrono::milliseconds(o.timeout_ms);
        bool too_quiet = o.no_output_timeout_ms && now >= last_output + std::chrono::milliseconds(o.no_output_timeout_ms);
        if (over_time || too_quiet) {
            r.timed_out = true;
            kill_command(over_time ? "timed out after " + format_duration_ms(o.timeout_ms)
                                   : "timed out after " + format_duration_ms(o.no_output_timeout_ms) + " without output");
        }
    }
    // What the command wrote before its status is in the FIFOs already.
    // (A pty's master, read without blocking, first passes on what is still on its way.)
    for (auto [fd, capture] : {std::pair{&ends->out, &out}, std::pair{&ends->err, &err}})
        if (*fd) pump(fd->get(), *capture, o.output_limit, true);
    r.out_sha256 = out.hash.hex();
    r.err_sha256 = err.hash.hex();
    r.in_bytes = command.size();
    if (!code) code = read_status(ends->status.get(), status, nonce);
    // A killed command is 137 whatever its shell reports: a shell that leaves a loop on
    // the trap's `return` may report the loop's last status instead.
    r.exit_code = code && !killed_at ? *code : 128 + SIGKILL;
    if (!code || killed_at) r.signal = SIGKILL;
    if (shell_exited && r.note.empty()) r.note = "the session's shell exited (the session has ended)";
    r.duration_ms = uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
    json entry = log_record(ref.sandbox, "session");
    entry["session"] = ref.id();
    entry["command"] = command;
    entry["cwd"] = cwd;
    entry["user"] = record->value("user", "");
    add_result(entry, r);
    if (auto logged = append_log(paths, ref.sandbox, entry); !logged && r.note.empty())
        r.note = "command log: " + logged.error().detail();
    return r;
}

}  // namespace dsec::sandbox
