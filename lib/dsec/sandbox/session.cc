#include "dsec/sandbox/session.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <map>

#include "dsec/sys/process.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/relay.h"
#include "dsec/sandbox/session_files.h"

namespace dsec::sandbox {

namespace session_files {

std::string all_dir(const Paths& paths, const std::string& id) { return paths.state_dir(id) + "/sessions"; }

std::string dir(const Paths& paths, const SessionRef& ref) { return all_dir(paths, ref.sandbox) + "/" + ref.key; }

Result<json> load(const Paths& paths, const SessionRef& ref) {
    auto text = fs::read_file(dir(paths, ref) + "/session.json");
    if (!text) {
        if (text.error().err == ENOENT)
            return fail(make_error(Code::not_found, "no session \"" + ref.id() + "\" (unknown or closed)", ref.id()));
        return fail(text.error());
    }
    auto j = json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return fail(make_error(Code::bad_input, "session record does not parse", dir(paths, ref) + "/session.json"));
    return j;
}

bool shell_alive(const json& record) {
    int pid = record.value("pid", 0);
    return pid > 0 && proc::process_alive(pid, record.value("pid_start", 0ULL));
}

std::set<int> session_pids(const cgroup::Cgroup& cg, int shell_pid) {
    std::set<int> pids;
    for (int pid : cg.pids())
        if (pid != shell_pid && proc::session_of(pid) == shell_pid) pids.insert(pid);
    return pids;
}

void kill_session_but(const cgroup::Cgroup& cg, int shell_pid, const std::set<int>& keep) {
    for (int pid : session_pids(cg, shell_pid))
        if (!keep.count(pid)) ::kill(pid, SIGKILL);
}

}  // namespace session_files

namespace {
// The FIFOs a session's shell is given: stdin, stdout, stderr, descriptor 9; with a pty
// its stdout and stderr are the terminal instead.
std::vector<std::string> fifo_names(bool pty) {
    if (pty) return {"in", "status"};
    return {"in", "out", "err", "status"};
}

// A terminal's first size: nothing inside may take a 0x0 terminal for none.
constexpr struct winsize kSessionTerminal = {24, 80, 0, 0};

// Removes a half-made session's directory unless kept.
class RemoveUnlessKept {
public:
    explicit RemoveUnlessKept(std::string dir) : dir_(std::move(dir)) {}
    ~RemoveUnlessKept() {
        if (!dir_.empty()) (void)fs::remove_tree(dir_);
    }
    void keep() { dir_.clear(); }

private:
    std::string dir_;
};

// The public record: the stored one without what only dsec-run needs.
json public_record(json record, bool alive) {
    record.erase("pid_start");
    record["state"] = alive ? "open" : "exited";
    return record;
}
}  // namespace

Result<SessionRef> SessionRef::parse(const std::string& session) {
    auto at = session.rfind('@');
    SessionRef ref;
    if (at != std::string::npos) ref = {session.substr(0, at), session.substr(at + 1)};
    bool ok = at != std::string::npos && check_id(ref.sandbox) && ref.key.size() == 8;
    for (char c : ref.key)
        if (!std::isxdigit((unsigned char)c)) ok = false;
    if (!ok) return fail(make_error(Code::bad_input, "invalid session id \"" + session + "\": SANDBOX@8 hex digits"));
    return ref;
}

Result<json> open_session(const Paths& paths, const std::string& id, const SessionOptions& so) {
    if (auto r = check_id(id); !r) return fail(r.error());
    if (!fs::exists(paths.state_dir(id)))
        return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id));
    SessionRef ref{id, random_hex(4)};
    std::string dir = session_files::dir(paths, ref);
    if (auto r = fs::mkdir_p(session_files::all_dir(paths, id), 0700); !r) return fail(r.error());
    if (::mkdir(dir.c_str(), 0700) < 0) return fail(sys_error("mkdir", dir));
    // Nothing is left behind by a session that did not start.
    RemoveUnlessKept remove_on_error(dir);
    // Opened read-write: the shell's stdin never sees EOF and its output always has a
    // reader, whoever else has the FIFO open (session.h).
    std::map<std::string, Fd> fifos;
    for (auto& name : fifo_names(so.pty)) {
        std::string path = dir + "/" + name;
        if (::mkfifo(path.c_str(), 0600) < 0) return fail(sys_error("mkfifo", path));
        fifos[name].reset(::open(path.c_str(), O_RDWR | O_CLOEXEC));
        if (!fifos[name]) return fail(sys_error("open", path));
    }
    ExecOptions o;
    o.argv = {so.shell};
    o.env = so.env;
    o.workdir = so.workdir;
    o.user = so.user;
    o.tty = so.pty;
    Io io;
    if (so.pty) {
        // Only the socket pair the terminal's master comes back on: stdio is the FIFOs'.
        auto made = Io::make(o);
        if (!made) return fail(made.error());
        io = std::move(*made);
        io.keep_master = true;
        io.size = kSessionTerminal;
    } else {
        io.child_out = fifos["out"].get();
        io.child_err = fifos["err"].get();
    }
    io.child_in = fifos["in"].get();
    io.child_fd9 = fifos["status"].get();
    auto started = start(paths, id, o, io);
    if (!started) return fail(started.error());
    if (auto note = started->failure_note(so.shell); !note.empty())
        return fail(make_error(Code::exec, "cannot start the session's shell: " + note, so.shell));
    // The shell holds the master itself (descriptor 8); ours is not needed.
    if (so.pty)
        if (auto r = io.receive_master(); !r) return fail(r.error());
    int pid = started->child.pid;
    json record = {{"type", "session"}, {"v", 1},          {"id", ref.id()},       {"sandbox", id},
                   {"shell", so.shell}, {"pty", so.pty},   {"pid", pid},       {"pid_start", proc::process_start(pid)},
                   {"user", started->user}, {"created", now_rfc3339()}};
    if (auto r = fs::atomic_write(dir + "/session.json", record.dump() + "\n", 0600); !r) {
        ::syscall(SYS_pidfd_send_signal, started->child.pidfd.get(), SIGKILL, nullptr, 0);
        return fail(r.error());
    }
    remove_on_error.keep();
    return public_record(record, true);
}

Result<std::vector<json>> list_sessions(const Paths& paths, const std::string& id) {
    std::vector<std::string> ids;
    if (!id.empty()) {
        if (auto r = check_id(id); !r) return fail(r.error());
        if (!fs::exists(paths.state_dir(id)))
            return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id));
        ids.push_back(id);
    } else {
        ids = list_ids(paths);
    }
    std::vector<json> out;
    for (auto& sandbox : ids) {
        auto keys = fs::list_dir(session_files::all_dir(paths, sandbox));
        if (!keys) continue;
        for (auto& key : *keys) {
            auto record = session_files::load(paths, {sandbox, key});
            // A session being opened has no record yet.
            if (record) out.push_back(public_record(*record, session_files::shell_alive(*record)));
        }
    }
    return out;
}

Result<json> close_session(const Paths& paths, const SessionRef& ref) {
    auto record = session_files::load(paths, ref);
    if (!record) return fail(record.error());
    // Killed before the lock is taken: a command running in the session ends with it
    // (its exec sees the shell gone) instead of holding the close up.
    if (session_files::shell_alive(*record)) {
        int pid = record->value("pid", 0);
        Fd pidfd(int(::syscall(SYS_pidfd_open, pid, 0)));
        if (pidfd && session_files::shell_alive(*record))
            ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
        if (auto cg = cgroup_of(paths, ref.sandbox)) session_files::kill_session_but(*cg, pid, {});
        // Gone when we return (the sandbox's init reaps it).
        struct pollfd gone = {pidfd.get(), POLLIN, 0};
        if (pidfd) (void)::poll(&gone, 1, 5000);
    }
    std::string dir = session_files::dir(paths, ref);
    auto held = fs::lock(dir + "/lock");
    if (!held) return fail(held.error());
    if (auto r = fs::remove_tree(dir); !r) return fail(r.error());
    return json{{"type", "session"}, {"v", 1}, {"id", ref.id()}, {"sandbox", ref.sandbox}, {"state", "closed"}};
}

}  // namespace dsec::sandbox
