// The host side of an exec: the child's stdio (pipes or a pseudo-terminal), the copy
// loop that relays our stdin in and streams or captures output, timeouts, and reaping.
#pragma once

#include <functional>

#include "dsec/ns/join.h"
#include "dsec/sandbox/exec.h"

namespace dsec::sandbox {

/// The descriptors of one exec: the child's ends (dup'd onto 0-2 in the child) and ours.
/// None of the child's is one of our own 0-2: all are made here.
struct Io {
    int child_in = -1, child_out = -1, child_err = -1;
    int tty_slave = -1;  // the controlling terminal to take, with -t
    Fd in_r, out_w, err_w, slave;  // the child's: in_r is a pipe's read end or /dev/null
    Fd in_w, out_r, err_r, master;  // ours; in_w and master do not block

    /// Three pipes (stdin's only with Stdin::relay, else /dev/null), or a new pty with
    /// -t. Errors: the failing pipe/pty call.
    static Result<Io> make(const ExecOptions& options);
    /// Closes our copies of the child's ends so that EOF comes when the command's do.
    void close_child_ends();
};

/// Copies output until the child has exited and its streams ended (or a short grace
/// after exit: background processes may hold them open), relays our stdin into the
/// child's meanwhile (EOF passed on: the pipe closed, or the EOF character typed on the
/// pty), and enforces the timeouts by calling `kill_tree`. Fills exit_code, signal,
/// output, timed_out and, after a timeout, note. SIGPIPE is blocked in the calling
/// thread meanwhile: a command that closes its stdin, or a reader of our stdout that
/// goes away, shows as EPIPE. Errors: poll failing.
Result<ExecResult> supervise(const ns::Joined& child, Io& io, const ExecOptions& options,
                             const std::function<void()>& kill_tree);

}  // namespace dsec::sandbox
