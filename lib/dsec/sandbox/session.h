// Persistent shell sessions: one shell per session, started inside a sandbox exactly as
// exec starts a command, fed command after command, so that cd, variables and background
// jobs carry over. There is no daemon and nothing listens inside the sandbox:
//
//   $DSEC_RUN/sandboxes/<id>/sessions/<hex>/   root's, mode 0700
//       in, out, err, status   FIFOs (0600): the shell's stdin, stdout, stderr and fd 9
//       session.json           the session record plus the shell's pid and start time
//       lock                   flock: one command at a time per session
//
// The shell keeps itself alive: it holds each FIFO open read-write, so its stdin never
// reaches EOF and its output never meets a reader-less pipe; when dsec-run exits the
// shell is re-parented to the sandbox's init like any orphan there. The FIFOs are reached
// by path only from the host (the sandbox's mount namespace has no way to them); the
// shell holds only its own descriptors. A session goes with its sandbox: destroy kills
// every process inside and removes the state directory, gc does the same for leftovers.
//
// Each command is sent as `command eval '<command>' </dev/null` followed by a line that
// writes its status, tagged with a fresh random nonce, to descriptor 9 (the status FIFO).
// Output is never parsed: stdout and stderr are the command's raw bytes, and the end of
// a command is the nonce on the separate status channel, so output without a newline or
// output that mimics the protocol cannot end a command early.
//
// With a terminal (--pty) the shell still reads its commands from `in` and reports on
// descriptor 9, but its stdout and stderr are a pty of the sandbox's own devpts (its
// controlling terminal), which each command also gets as stdin. The shell holds the
// pty's master as descriptor 8 (closed for the commands it runs) and so keeps the
// terminal alive between calls; each `session exec` takes a copy of that master with
// pidfd_getfd(2) and reads the command's output from it (`out` and `err` do not exist).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sandbox/exec.h"
#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

struct SessionOptions {
    std::string shell = "/bin/sh";  // run as `SHELL` with no arguments, reading stdin
    std::vector<std::string> env;   // K=V on top of the sandbox's
    std::string workdir;            // empty: the sandbox's
    std::string user;               // empty: the sandbox's
    bool pty = false;               // commands run on a terminal (stdout and stderr merged)
};

/// A session id ("<sandbox>@<8 hex digits>") taken apart.
struct SessionRef {
    std::string sandbox, key;
    /// Errors: bad_input (not of that form).
    static Result<SessionRef> parse(const std::string& session);
    std::string id() const { return sandbox + "@" + key; }
};

/// Starts a shell in running sandbox `id` and returns its record
/// {"type":"session","v":1,"id","sandbox","shell","pty","pid","state":"open","created"}.
/// Errors: those of exec's start; exec (the shell could not be started) with its reason.
Result<json> open_session(const Paths& paths, const std::string& id, const SessionOptions& options);

/// Runs `command` in the session's shell and waits for its status, with exec's timeouts
/// and output limit (other fields of `options` are ignored). A command still running at
/// a timeout loses every process it started (the processes of the shell's session that
/// were not there before it); if the shell itself is what runs on (a loop in the shell),
/// the shell is killed and the session ends. Waits for a command already running in the
/// session. Errors: not_found (no such session), not_running (its shell has exited),
/// bad_input (a NUL byte in the command), the failing open/poll.
Result<ExecResult> session_exec(const Paths& paths, const SessionRef& session, const std::string& command,
                                const ExecOptions& options);

/// Session records of sandbox `id` ("" : of every sandbox), "state" "open" or "exited".
/// Errors: not_found (no such sandbox, when one is named).
Result<std::vector<json>> list_sessions(const Paths& paths, const std::string& id);

/// Kills the session's shell and whatever still runs in its session, removes its files,
/// and returns {"type":"session","v":1,"id","sandbox","state":"closed"}.
/// Errors: not_found (no such session).
Result<json> close_session(const Paths& paths, const SessionRef& session);

}  // namespace dsec::sandbox
