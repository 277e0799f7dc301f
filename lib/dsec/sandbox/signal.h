// `dsec-run kill`: a signal for every command running in a sandbox (never its init,
// which holds the sandbox together).
#pragma once

#include <string>

#include "dsec/sandbox/state.h"
#include "dsec/sys/error.h"

namespace dsec::sandbox {

/// "KILL", "SIGTERM", "term", "9". Errors: usage.
Result<int> parse_signal(const std::string& text);

/// Sends `sig` to every process in sandbox `id`'s cgroup but its init, each through a
/// pidfd opened and checked to be in that cgroup first (a pid reused meanwhile is never
/// hit). Returns how many processes got it. Errors: not_found, not_running.
Result<int> signal_sandbox(const Paths& paths, const std::string& id, int sig);

}  // namespace dsec::sandbox
