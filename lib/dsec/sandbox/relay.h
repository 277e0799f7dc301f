// The host side of an exec: the child's stdio (pipes or a pseudo-terminal), the copy
// loop that relays our stdin in and streams or captures output, timeouts, and reaping.
#pragma once

#include <sys/ioctl.h>
#include <sys/types.h>

#include <functional>

#include "dsec/ns/join.h"
#include "dsec/sandbox/exec.h"

namespace dsec::sandbox {

/// The descriptors of one exec: the child's ends (dup'd onto 0-2 in the child) and ours.
/// None of the child's is one of our own 0-2: all are made here.
struct Io {
    int child_in = -1, child_out = -1, child_err = -1;
    int child_fd9 = -1;  // given to the command as descriptor 9 when set (a session's status channel)
    // With -t: child_in, when set, is the command's stdin instead of the pty (a session's
    // shell reads its commands from a FIFO); keep_master leaves the pty's master open in
    // the command as descriptor 8 (a session's shell holds its own terminal).
    bool keep_master = false;
    // Its caller waits for its end (exec, not a session's shell): a command joined from
    // outside dies with the dsec-run thread that started it (its parent-death signal), as
    // the init kills a served one whose caller went away.
    bool caller_waits = false;
    Fd in_r, out_w, err_w;  // the child's: in_r is a pipe's read end or /dev/null
    Fd in_w, out_r, err_r, master;  // ours; in_w and master do not block
    // With -t the pty is the sandbox's own (its devpts), opened by the child once inside
    // (open_pty_inside) and its master sent back over this socket pair.
    Fd pty_sock, pty_sock_child;
    struct winsize size = {};  // our terminal's, for the new pty (0x0: none)

    /// Three pipes (stdin's only with Stdin::relay, else /dev/null), or, with -t, the
    /// socket pair the pty's master comes back on. Errors: the failing pipe/socket call.
    static Result<Io> make(const ExecOptions& options);
    /// With -t, after the child has run: takes the master it sent. Errors: io (the child
    /// died before sending it; its own report says why).
    Status receive_master();
    /// Closes our copies of the child's ends so that EOF comes when the command's do.
    void close_child_ends();
};

/// In the exec child, inside the sandbox, with -t: opens a pty on the sandbox's devpts
/// (so `tty` inside names it), owned by `uid`, sized `size`, sends its master on `sock`,
/// and makes the slave the controlling terminal and stdio. With `master_kept`, a copy of
/// the master (close-on-exec, above 9) is left there instead of being closed. Only
/// async-signal-safe calls. Returns -1 with errno set on failure.
int open_pty_inside(int sock, uid_t uid, const struct winsize& size, int* master_kept = nullptr);

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
