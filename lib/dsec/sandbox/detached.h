// Detached execs (`dsec-run exec -d`): a command left running in a sandbox after
// dsec-run returns, its output kept in files the host owns.
//
//   $DSEC_RUN/sandboxes/<id>/execs/<key>/   root's, mode 0700
//       exec.json            {"type":"exec","v":1,"id","exec","argv","pid","pid_start","created"}
//                            (pid: the supervisor's, a host process)
//       stdout, stderr       the command's output, as it came
//       stdout.1, stderr.1   the previous part of it, once a stream passed its cap
//       result.json          the result record, written once the command has ended
//
// The command is run by a supervisor: a host process of ours, in a session of its own
// and holding none of the caller's descriptors, that runs exec() as `dsec-run exec`
// would (same joining, confinement, command log and timeouts) with stdin /dev/null and
// its output into pipes it reads itself. The command never holds a descriptor of these
// files, so however much it writes, each stream takes at most twice its cap on disk:
// when `stdout` reaches the cap it becomes `stdout.1` (replacing the one before) and a
// new `stdout` begins; older output is dropped (its byte count stays in the result).
//
// A detached exec goes with its sandbox: destroy kills every process in it, the
// supervisor sees its command end and exits, and the state directory, these files
// included, is removed. Files are made under the sandbox's lock, and not once its state
// says "destroying", so nothing is added while destroy removes the directory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sandbox/exec.h"
#include "dsec/sandbox/state.h"
#include "dsec/sys/fd.h"

namespace dsec::sandbox {

/// $DSEC_RUN/sandboxes/<id>/execs
std::string detached_dir(const Paths& paths, const std::string& id);

/// True for an exec key as exec_detached() makes them: 8 lowercase hex digits.
bool valid_exec_key(const std::string& key);

/// One stream of a detached exec written to `dir`/`name`, rotated to `name`.1 each time
/// it reaches `cap` bytes (so at most 2 x cap on disk). `may_add` is asked before a new
/// file is made; false drops the rest of the output (the sandbox is going).
class RotatingFile {
public:
    RotatingFile(std::string dir, std::string name, uint64_t cap);
    /// Makes the first file. Errors: the failing open.
    Status open();
    /// Appends `data`, rotating as needed. Errors: the failing write/rename/open.
    Status write(std::string_view data, const std::function<bool()>& may_add);
    /// Bytes given to write() in all, and bytes dropped by rotation.
    uint64_t total() const { return total_; }
    uint64_t dropped() const { return dropped_; }

private:
    Status rotate();
    std::string dir_, name_;
    uint64_t cap_, size_ = 0, total_ = 0, dropped_ = 0, previous_ = 0;
    bool stopped_ = false;
    Fd fd_;
};

/// Starts options.argv in running sandbox `id` under a supervisor (see above) and returns
/// once it runs, with the exec's record {"type":"exec","v":1,"id","exec","argv",
/// "state":"running","created"}. options.output_limit is each stream's cap; stdin is
/// /dev/null; tty and capture are ignored. A command that cannot be started (not found)
/// shows in its result, as with exec. Errors: usage (no command), not_found, not_running,
/// the failing mkdir/fork.
Result<json> exec_detached(const Paths& paths, const std::string& id, const ExecOptions& options);

/// The records of sandbox `id`'s detached execs, oldest first, "state" "running",
/// "exited" (with "exit_code") or "lost" (its supervisor was killed). Errors: not_found.
Result<std::vector<json>> list_detached(const Paths& paths, const std::string& id);

/// Writes what the detached exec `key` ("" : the latest one) printed: stdout to `out_fd`,
/// stderr to `err_fd`. With `follow`, goes on until the command has ended and its output
/// has been read (or interrupted() is seen). Errors: not_found (no such sandbox or exec,
/// no detached exec at all), the failing read/write.
Status print_detached_output(const Paths& paths, const std::string& id, const std::string& key, bool follow,
                             int out_fd, int err_fd);

/// Waits until detached exec `key` ("" : the latest) has ended and returns its result
/// record ({"type":"result",..., "exec", "stdout_bytes", "stderr_bytes", "stdout_dropped",
/// "stderr_dropped"}). Errors: not_found, not_running (the sandbox was destroyed before
/// it ended), exec (its supervisor died without a result; the error its start gave).
Result<json> wait_detached(const Paths& paths, const std::string& id, const std::string& key);

/// Waits until sandbox `id`'s init has exited (destroyed, TTL, or killed) and returns
/// {"type":"sandbox","v":1,"id","state":"exited"}. Errors: not_found.
Result<json> wait_sandbox(const Paths& paths, const std::string& id);

}  // namespace dsec::sandbox
