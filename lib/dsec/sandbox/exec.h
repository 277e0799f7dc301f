// Running a command inside a live sandbox from outside: join its cgroups and namespaces,
// fork into its pid namespace, drop to its user, exec. Output streamed or captured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

    /// {"type":"result","v":1,"id",...}
    nlohmann::json to_record(const std::string& id) const;
};

/// Runs options.argv in sandbox `id` and waits for it (and for its output to end).
/// A missing command gives exit_code 127, a non-executable one 126 (not an error).
/// Errors: not_found (unknown/destroyed sandbox), not_running (its init is gone),
/// the failing join step.
Result<ExecResult> exec(const Paths& paths, const std::string& id, const ExecOptions& options);

}  // namespace dsec::sandbox
