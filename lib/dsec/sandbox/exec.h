// Running a command inside a live sandbox from outside: join its cgroups and namespaces,
// fork into its pid namespace, drop to its user, exec. Output streamed or captured.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/cgroup/cgroup.h"
#include "dsec/ns/join.h"
#include "dsec/sandbox/activity.h"
#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// The command's stdin. Never one of our own descriptors: a host file or terminal given
/// to the command could be reopened read-write through /proc/self/fd/0, seeked or
/// truncated from inside.
enum class Stdin {
    relay,  // a pipe (the pty with tty) that supervise() copies our stdin into
    null,   // /dev/null (with tty: the pty, at EOF from the start)
};

struct ExecOptions {
    std::vector<std::string> argv;
    bool capture = false;                 // --json: capture stdout/stderr into the result
    bool tty = false;                     // -t: a pseudo-terminal (host side in raw mode)
    Stdin input = Stdin::relay;
    uint64_t timeout_ms = 0;              // 0: none
    uint64_t no_output_timeout_ms = 0;    // 0: none
    size_t output_limit = 1 << 20;        // bytes kept per stream when capturing
    std::vector<std::string> env;         // K=V on top of the sandbox's
    std::string workdir;                  // empty: the sandbox's
    std::string user;                     // empty: the sandbox's
    bool log = true;                      // false: no record in the command log (a one-shot's
                                          // goes with its sandbox), nor the hashes it holds
    bool ends_sandbox = false;            // a one-shot's own command: served, its end lets the
                                          // init leave (DSEC_EXEC_ENDS_SANDBOX)
};

/// What the command did. exit_code is the status, or 128+signal when killed.
struct ExecResult {
    int exit_code = 0;
    int signal = 0;
    std::string out, err;
    bool out_truncated = false, err_truncated = false;
    uint64_t duration_ms = 0;
    bool timed_out = false;
    std::string note;  // "command not found", "sandbox destroyed during exec", ...
    bool init_left = false;  // a one-shot's init left with its command's status, nothing
                             // else at work inside (DSEC_EXEC_INIT_LEAVES)
    // For the command log: every byte counted and hashed, kept or not (out and err hold
    // up to the output limit with --json, and up to kLogOutputCap when streaming).
    uint64_t in_bytes = 0, out_bytes = 0, err_bytes = 0;
    std::string out_sha256, err_sha256;

    /// {"type":"result","v":1,"id",...}
    nlohmann::json to_record(const std::string& id) const;
};

struct Io;  // relay.h

/// A command started inside a sandbox and not waited for yet: exec's first half, which
/// sessions use to start their shell.
struct Started {
    ns::Joined child;
    Fd failure;  // read end of the child's report: a failure before its execve, else EOF
    Use use;     // the sandbox is in use (and thawed) while this lives
    cgroup::Cgroup cg;
    std::string workdir, user;  // where and as whom ("UID:GID") it runs
    /// Blocks until the child has exec'd (EOF) or reported a failure, which it returns as
    /// the note exec puts in its result ("command not found: sh", ...); "" on success.
    std::string failure_note(const std::string& command);
};

/// Starts options.argv in sandbox `id` with `io`'s descriptors as its stdio (and
/// io.child_fd9, when set, as its descriptor 9), through the same steps and confinement
/// as exec(). With a tty the terminal's master is not received yet. `may_serve`: a
/// command that can be is forked by the sandbox's init (served.h), its end then reported
/// on child.ended. Errors: those of exec().
Result<Started> start(const Paths& paths, const std::string& id, const ExecOptions& options, Io& io,
                      bool may_serve = false);

/// Runs options.argv in sandbox `id` and waits for it (and for its output to end).
/// A missing command gives exit_code 127, a non-executable one 126 (not an error).
/// Errors: not_found (unknown/destroyed sandbox), not_running (its init is gone),
/// the failing join step.
Result<ExecResult> exec(const Paths& paths, const std::string& id, const ExecOptions& options);

/// An exec whose request went to the sandbox's init before the sandbox was running
/// (send_ahead); empty when none did.
class SentAhead {
public:
    struct Parts;
    SentAhead();
    explicit SentAhead(std::unique_ptr<Parts> parts);
    SentAhead(SentAhead&&) noexcept;
    SentAhead& operator=(SentAhead&&) noexcept;
    ~SentAhead();
    explicit operator bool() const { return bool(parts_); }
    Parts& parts() { return *parts_; }

private:
    std::unique_ptr<Parts> parts_;
};

/// exec()'s first half for a sandbox being created (dsec-run run), called while its init
/// sets itself up (CreateOptions::while_starting): sends the init the request for
/// `options`, which it serves the moment it is ready, so that preparing it overlaps the
/// init's set-up. `creating` is the sandbox's state as saved so far. Empty when the
/// command cannot be served so (a terminal, another user, a user name to look up
/// inside): exec() then runs it as usual. Errors: the failing pipe call.
Result<SentAhead> send_ahead(const Paths& paths, const State& creating, const ExecOptions& options);

/// exec() with its request sent ahead (an empty `ahead`: exec() above), once the sandbox
/// is running. Errors: those of exec().
Result<ExecResult> exec(const Paths& paths, const std::string& id, const ExecOptions& options, SentAhead ahead);

/// Where execvp would look for `file`: the file itself when it names a path, else in each
/// directory of the PATH in `env` (K=V entries; glibc's default /bin:/usr/bin when there is
/// none; an empty entry is the working directory). Empty for an empty `file`. The exec
/// child searches these itself: it runs in dsec-run's memory until its execve, so it
/// may not point our `environ` at the sandbox's environment and call execvp.
std::vector<std::string> exec_candidates(const std::string& file, const std::vector<std::string>& env);

}  // namespace dsec::sandbox
