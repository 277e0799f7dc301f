#include "dsec/sandbox/exec.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>

#include "dsec/cgroup/cgroup.h"
#include "dsec/ns/confine.h"
#include "dsec/ns/join.h"
#include "dsec/sandbox/activity.h"
#include "dsec/sandbox/cpu_class.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/log.h"
#include "dsec/sandbox/open.h"
#include "dsec/sandbox/relay.h"
#include "dsec/sandbox/user.h"
#include "dsec/sandbox/security.h"
#include "dsec/sandbox/served.h"
#include "dsec/sys/process.h"
#include "dsec/sys/sha256.h"

namespace dsec::sandbox {

std::vector<std::string> exec_candidates(const std::string& file, const std::vector<std::string>& env) {
    if (file.empty()) return {};
    if (file.find('/') != std::string::npos) return {file};
    std::string path = "/bin:/usr/bin";
    for (auto& e : env)
        if (e.rfind("PATH=", 0) == 0) {
            path = e.substr(5);  // the first, as getenv finds it
            break;
        }
    std::vector<std::string> out;
    for (size_t start = 0;;) {
        size_t end = path.find(':', start);
        std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
        out.push_back(dir.empty() ? file : dir + "/" + file);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

namespace {
using ChildError = dsec_exec_failure;

// Everything the child needs, built before forking.
struct Prepared {
    std::vector<std::string> env_store;
    std::vector<char*> argv, envp;
    std::string workdir;
    User user;
    Security security;
    std::unique_ptr<dsec_confinement> confinement;
    std::vector<std::string> candidates;  // paths to try execve on, in order
    std::vector<char*> candidate_ptrs;    // ... as the child passes them
    std::vector<char*> sh_argv;           // /bin/sh FILE ARGS... for a file without a #! line
};

Result<Prepared> prepare(const State& st, const ExecOptions& o) {
    Prepared p;
    const json& state = st.extra;
    for (auto& e : state.value("env", json::array()))
        if (e.is_string()) p.env_store.push_back(e.get<std::string>());
    for (auto& kv : o.env) {
        auto key = kv.substr(0, kv.find('=') + 1);
        std::erase_if(p.env_store, [&](const std::string& e) { return e.rfind(key, 0) == 0; });
        p.env_store.push_back(kv);
    }
    if (o.tty && std::none_of(p.env_store.begin(), p.env_store.end(),
                              [](const std::string& e) { return e.rfind("TERM=", 0) == 0; })) {
        const char* term = std::getenv("TERM");
        p.env_store.push_back(std::string("TERM=") + (term ? term : "xterm"));
    }
    for (auto& e : p.env_store) p.envp.push_back(e.data());
    p.envp.push_back(nullptr);
    for (auto& a : o.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
    p.argv.push_back(nullptr);
    p.candidates = exec_candidates(o.argv[0], p.env_store);
    for (auto& c : p.candidates) p.candidate_ptrs.push_back(c.data());
    p.sh_argv = {const_cast<char*>("/bin/sh"), nullptr};
    p.sh_argv.insert(p.sh_argv.end(), p.argv.begin() + 1, p.argv.end());
    p.workdir = !o.workdir.empty() ? o.workdir : state.value("workdir", "/");
    auto user = resolve_user(!o.user.empty() ? o.user : state.value("user", "0"), st.pid);
    if (!user) return fail(user.error());
    p.user = *user;
    auto security = security_from_state(state);
    if (!security) return fail(security.error());
    p.security = *security;
    return p;
}

// Whether the init can fork the command (served.h): root's, on plain pipes (a terminal,
// a descriptor 9 or another user need the join from outside).
bool servable(const Io& io, const User& user) {
    return !io.pty_sock_child && io.child_fd9 < 0 && io.child_in >= 0 && io.child_out >= 0 && io.child_err >= 0 &&
           user.uid == 0 && user.gid == 0;
}

// The deadline of a command that has not started yet: the nearer of its timeouts (0:
// none), as nothing has been output either.
uint64_t start_deadline_ms(const ExecOptions& o) {
    if (!o.timeout_ms || !o.no_output_timeout_ms) return o.timeout_ms | o.no_output_timeout_ms;
    return std::min(o.timeout_ms, o.no_output_timeout_ms);
}

// Sends the init of sandbox `id` the request for the prepared command, with `io`'s stdio
// and the failure pipe's write end (served.h send_served).
Result<std::optional<Fd>> ask_init(const Paths& paths, const std::string& id, const Prepared& p,
                                   const ExecOptions& o, const Io& io, int err_w) {
    ServedCommand cmd{p.workdir, o.argv, p.env_store, p.candidates, o.ends_sandbox};
    const int fds[4] = {io.child_in, io.child_out, io.child_err, err_w};
    return send_served(paths.state_dir(id), paths.exec_socket_name(), cmd, fds);
}

// Started::user: "UID:GID".
std::string user_text(const User& user) { return std::to_string(user.uid) + ":" + std::to_string(user.gid); }

// Runs in the child, inside the sandbox, in our memory until its execve: only
// async-signal-safe calls, no allocation, nothing written but `p.sh_argv[1]`.
[[noreturn]] void child_main(Prepared& p, const Io& io, int err_fd) {
    auto die = [&](int stage, int code) {
        ChildError ce{stage, errno};
        (void)!::write(err_fd, &ce, sizeof ce);
        ::_exit(code);
    };
    // Its own session: the whole command tree can be found and killed by session id.
    ::setsid();
    int fds[3] = {io.child_in, io.child_out, io.child_err};
    int master = -1;
    if (io.pty_sock_child) {
        int slave = open_pty_inside(io.pty_sock_child.get(), uid_t(p.user.uid), io.size,
                                    io.keep_master ? &master : nullptr);
        if (slave < 0 || (io.keep_master && master < 0)) die(3, 126);
        fds[0] = io.child_in >= 0 ? io.child_in : slave;
        fds[1] = fds[2] = slave;
    }
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0 && ::dup2(fds[i], i) < 0) die(1, 126);
    if (io.child_fd9 >= 0 && ::dup2(io.child_fd9, 9) < 0) die(1, 126);
    if (master >= 0 && ::dup2(master, 8) < 0) die(1, 126);
    // No host descriptor may leak into the sandbox (8 and 9 only when given on purpose).
    constexpr unsigned kCloexec = 4U;  // CLOSE_RANGE_CLOEXEC
    ::syscall(SYS_close_range, 3U, 7U, kCloexec);
    if (master < 0) ::syscall(SYS_close_range, 8U, 8U, kCloexec);
    if (io.child_fd9 < 0) ::syscall(SYS_close_range, 9U, 9U, kCloexec);
    ::syscall(SYS_close_range, 10U, ~0U, kCloexec);
    if (::chdir(p.workdir.c_str()) < 0) die(0, 126);
    const char* op = "";
    if (dsec_confine(p.confinement.get(), &op) < 0) die(1, 126);
    // After the confinement's change of ids, which clears it. Had dsec-run died before
    // (its signal then never comes), the failure pipe has lost its only reader: a write
    // end without readers polls as an error.
    if (io.caller_waits) {
        pollfd reader = {err_fd, POLLOUT, 0};
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || (::poll(&reader, 1, 0) == 1 && (reader.revents & POLLERR)))
            ::_exit(126);
    }
    signal(SIGPIPE, SIG_DFL);
    std::vector<char*>& cands = p.candidate_ptrs;
    errno = dsec_exec_candidates(cands.data(), cands.size(), p.argv.data(), p.envp.data(), p.sh_argv.data());
    die(2, errno == ENOENT ? 127 : 126);
    ::_exit(127);  // not reached: die() exits
}

// The command's tree is its session: its group and any process that kept the session
// (a process that called setsid itself has left on purpose, like a daemon). A command
// the init served is not our child, so its pid may be free for reuse once it has ended:
// it is signalled through its pidfd, and its session looked for in the sandbox's cgroup
// only, never by process group host-wide.
void kill_session(const cgroup::Cgroup& cg, const ns::Joined& child) {
    if (child.ended) ::syscall(SYS_pidfd_send_signal, child.pidfd.get(), SIGKILL, nullptr, 0);
    else ::kill(-child.pid, SIGKILL);
    if (child.pid <= 0) return;  // served and already ended before we knew its pid
    for (int pid : cg.pids())
        if (proc::session_of(pid) == child.pid) ::kill(pid, SIGKILL);
}

}  // namespace

nlohmann::json ExecResult::to_record(const std::string& id) const {
    json r = {{"type", "result"},         {"v", 1},
              {"id", id},                 {"exit_code", exit_code},
              {"signal", signal ? json(signal) : json(nullptr)},
              {"stdout", out},            {"stderr", err},
              {"stdout_truncated", out_truncated},
              {"stderr_truncated", err_truncated},
              {"duration_ms", duration_ms}, {"timed_out", timed_out}};
    if (!note.empty()) r["note"] = note;
    return r;
}

std::string Started::failure_note(const std::string& command) {
    ChildError ce{};
    ssize_t n;
    while ((n = ::read(failure.get(), &ce, sizeof ce)) < 0 && errno == EINTR) {
    }
    if (n != ssize_t(sizeof ce)) return "";
    static const char* stages[] = {"cannot enter working directory", "cannot confine the command",
                                   "cannot execute command", "cannot open a terminal inside"};
    if (ce.stage == 2 && ce.err == ENOENT) return "command not found: " + command;
    return std::string(stages[ce.stage % 4]) + ": " + errno_name(ce.err);
}

Result<Started> start(const Paths& paths, const std::string& id, const ExecOptions& o, Io& io, bool may_serve) {
    if (auto r = check_id(id); !r) return fail(r.error());
    if (o.argv.empty()) return fail(make_error(Code::usage, "no command given (dsec-run exec ID -- CMD...)"));
    // The state is read here once; nothing on this path writes it.
    auto opened = open_sandbox(paths, id, Need::running);
    if (!opened) return fail(opened.error());
    const State& state = opened->state;
    auto prepared = prepare(state, o);
    if (!prepared) return fail(prepared.error());
    // Held until the command ends: the sandbox is in use (not idle) meanwhile.
    auto in_use = begin_use(paths, id);
    if (!in_use) return fail(in_use.error());

    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    Fd err_r(p[0]), err_w(p[1]);
    auto made = [&](ns::Joined child) {
        return Started{std::move(child), std::move(err_r), std::move(*in_use), std::move(opened->cg),
                       prepared->workdir, user_text(prepared->user)};
    };
    // Root's commands with plain pipes are forked by the init, which already holds the
    // sandbox's namespaces, cgroups and confinement (a terminal, a descriptor 9, another
    // user, or a sandbox whose init does not serve: joined from outside, below).
    if (may_serve && servable(io, prepared->user)) {
        auto sent = ask_init(paths, id, *prepared, o, io, err_w.get());
        if (!sent) return fail(sent.error());
        if (*sent) {
            auto served = await_served(std::move(**sent), paths.state_dir(id), paths.exec_socket_name());
            if (!served) return fail(served.error());
            if (*served) return made(std::move(**served));
        }
    }
    auto confinement = confinement_for(paths, id, prepared->security, prepared->user.uid, prepared->user.gid);
    if (!confinement) return fail(confinement.error());
    prepared->confinement = std::move(*confinement);
    apply_cpu_class(cpu_class_of(state.extra), *prepared->confinement);
    ns::JoinSpec spec = opened->join(0, prepared->security.userns);
    spec.keep_fds = {io.child_in, io.child_out, io.child_err, io.pty_sock_child.get(), io.child_fd9, err_w.get()};
    spec.body_execs = true;
    // Until its execve the child runs in our memory and may be stopped from inside: the
    // command's deadline holds from here (it starts again when the command does).
    spec.timeout_ms = start_deadline_ms(o);
    auto child = ns::spawn_inside(spec, [&] { child_main(*prepared, io, err_w.get()); });
    if (!child) {
        if (child.error().code == Code::not_running)
            return fail(make_error(Code::not_running, "sandbox \"" + id + "\" has no live init (destroy it)", id));
        return fail(child.error());
    }
    return made(std::move(*child));
}

namespace {
// exec()'s second half: the command started, its output relayed until it ends.
Result<ExecResult> wait_for(const Paths& paths, const std::string& id, const ExecOptions& o, Io& io,
                            std::chrono::steady_clock::time_point start_time, Started& started) {
    if (o.tty)
        if (auto r = io.receive_master(); !r) {
            ChildError ce{};
            if (::read(started.failure.get(), &ce, sizeof ce) == ssize_t(sizeof ce))
                return fail(errno_error(ce.err, "open", "a terminal inside the sandbox (/dev/ptmx)"));
            return fail(r.error());
        }
    io.close_child_ends();

    const cgroup::Cgroup& cg = started.cg;
    auto result = supervise(started.child, io, o, [&] { kill_session(cg, started.child); });
    if (!result) return fail(result.error());
    result->duration_ms = uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::steady_clock::now() - start_time).count());
    if (auto note = started.failure_note(o.argv[0]); !note.empty()) result->note = note;
    if (result->signal == SIGKILL) {
        auto now = load(paths, id);
        if (!now || now->lifecycle == Lifecycle::destroying) result->note = "sandbox destroyed during exec";
    }
    if (!o.log) return result;
    json entry = log_record(id, "exec");
    entry["argv"] = o.argv;
    entry["cwd"] = started.workdir;
    entry["user"] = started.user;
    add_result(entry, *result);
    // The command has run: a log that cannot be written is said, not made the result.
    if (auto r = append_log(paths, id, entry); !r && result->note.empty()) result->note = "command log: " + r.error().detail();
    return result;
}
}  // namespace

namespace {
// start() gave up on a command its deadline passed before it started (joined: a process
// inside stopped it before its execve, or the host is that slow). Said as a timeout is,
// and logged.
Result<ExecResult> not_started(const Paths& paths, const std::string& id, const ExecOptions& o,
                               std::chrono::steady_clock::time_point start_time) {
    ExecResult r;
    r.timed_out = true;
    r.signal = SIGKILL;
    r.exit_code = 128 + SIGKILL;
    r.note = "timed out after " + format_duration_ms(start_deadline_ms(o)) + " before the command started";
    r.duration_ms = uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - start_time).count());
    r.out_sha256 = r.err_sha256 = Sha256().hex();
    if (!o.log) return r;
    json entry = log_record(id, "exec");
    entry["argv"] = o.argv;
    add_result(entry, r);
    if (auto logged = append_log(paths, id, entry); !logged) r.note += "; command log: " + logged.error().detail();
    return r;
}

Result<ExecResult> start_and_wait(const Paths& paths, const std::string& id, const ExecOptions& o, Io& io,
                                  std::chrono::steady_clock::time_point start_time) {
    io.caller_waits = true;
    auto started = start(paths, id, o, io, true);
    if (!started && started.error().code == Code::timed_out) return not_started(paths, id, o, start_time);
    if (!started) return fail(started.error());
    return wait_for(paths, id, o, io, start_time, *started);
}
}  // namespace

Result<ExecResult> exec(const Paths& paths, const std::string& id, const ExecOptions& o) {
    auto io = Io::make(o);
    if (!io) return fail(io.error());
    return start_and_wait(paths, id, o, *io, std::chrono::steady_clock::now());
}

struct SentAhead::Parts {
    Io io;
    Fd sock;     // the connection the request went on, which the init answers
    Fd failure;  // read end of the child's report (Started::failure)
    Use use;     // Started's: the sandbox in use, and its cgroup
    cgroup::Cgroup cg;
    std::string workdir, user;
};

SentAhead::SentAhead() = default;
SentAhead::SentAhead(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}
SentAhead::SentAhead(SentAhead&&) noexcept = default;
SentAhead& SentAhead::operator=(SentAhead&&) noexcept = default;
SentAhead::~SentAhead() = default;

Result<SentAhead> send_ahead(const Paths& paths, const State& creating, const ExecOptions& o) {
    // Served as start() would serve it. A user named rather than numbered is looked up
    // in the sandbox's /etc/passwd, which is not there yet.
    const std::string& user = !o.user.empty() ? o.user : creating.extra.value("user", "0");
    if (o.argv.empty() || o.tty || !parse::is_numeric_user(user)) return SentAhead();
    auto io = Io::make(o);
    if (!io) return fail(io.error());
    auto prepared = prepare(creating, o);
    if (!prepared || !servable(*io, prepared->user)) return SentAhead();
    // What start() holds while the command runs, taken now as well, off the path from
    // the init's report to the command's end.
    auto cg = cgroup_of(paths, creating);
    if (!cg) return SentAhead();
    auto in_use = begin_use(paths, creating.id);
    if (!in_use) return SentAhead();
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    Fd err_r(p[0]), err_w(p[1]);
    auto sent = ask_init(paths, creating.id, *prepared, o, *io, err_w.get());
    if (!sent) return fail(sent.error());
    if (!*sent) return SentAhead();
    return SentAhead(std::make_unique<SentAhead::Parts>(SentAhead::Parts{std::move(*io), std::move(**sent), std::move(err_r),
                                                                         std::move(*in_use), std::move(*cg), prepared->workdir,
                                                                         user_text(prepared->user)}));
}

Result<ExecResult> exec(const Paths& paths, const std::string& id, const ExecOptions& o, SentAhead ahead) {
    if (!ahead) return exec(paths, id, o);
    SentAhead::Parts& a = ahead.parts();
    // The command's time starts here, as exec()'s does: not while its sandbox was made.
    auto start_time = std::chrono::steady_clock::now();
    auto served = await_served(std::move(a.sock), paths.state_dir(id), paths.exec_socket_name());
    if (!served) return fail(served.error());
    if (!*served) {
        // Refused, so never started: run it as any exec, with the same descriptors.
        return start_and_wait(paths, id, o, a.io, start_time);
    }
    Started started{std::move(**served), std::move(a.failure), std::move(a.use), std::move(a.cg), a.workdir, a.user};
    return wait_for(paths, id, o, a.io, start_time, started);
}

}  // namespace dsec::sandbox
