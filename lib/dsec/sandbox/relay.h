// The host side of an exec: the child's stdio (pipes or a pseudo-terminal), the copy
// loop that streams or captures output, timeouts, and reaping.
#pragma once

#include <functional>

#include "dsec/ns/join.h"
#include "dsec/sandbox/exec.h"

namespace dsec::sandbox {

/// The descriptors of one exec: the child's ends (dup'd onto 0-2 in the child) and ours.
struct Io {
    int child_in = -1, child_out = -1, child_err = -1;
    int tty_slave = -1;  // the controlling terminal to take, with -t
    Fd in_owned, out_w, err_w, slave;
    Fd out_r, err_r, master;

    /// Pipes for stdout/stderr (stdin inherited or /dev/null), or a host pty with -t.
    /// Errors: the failing pipe/pty call.
    static Result<Io> make(const ExecOptions& options);
    /// Closes our copies of the child's ends so that EOF comes when the command's do.
    void close_child_ends();
};

/// Copies output until the child has exited and its streams ended (or a short grace
/// after exit: background processes may hold them open), enforcing the timeouts by
/// calling `kill_tree`. Fills exit_code, signal, output and timed_out.
Result<ExecResult> supervise(const ns::Joined& child, Io& io, const ExecOptions& options,
                             const std::function<void()>& kill_tree);

}  // namespace dsec::sandbox
