// Which layers live sandboxes use, derived from sandbox state each time (never a
// counter that could drift).
#pragma once

#include <map>
#include <string>

#include "dsec/sys/error.h"

namespace dsec::mount {

/// Sandbox state lives in `<run>/sandboxes/<id>/state.json`: the sandbox record, with
/// at least "id", "pid", "pid_start" (field 22 of /proc/<pid>/stat, to tell a reused
/// pid) and "rootfs" (the rootfs record with its "layers").
std::string sandboxes_dir(const std::string& run_dir);

/// True when the process `pid` exists, is not a zombie and, if `start` is non-zero, started at `start`
/// (clock ticks since boot, as /proc/<pid>/stat says).
bool process_alive(int pid, unsigned long long start);

/// The start time of `pid` from /proc/<pid>/stat, or 0 when it is gone.
unsigned long long process_start(int pid);

/// digest -> number of live sandboxes whose rootfs includes it. State files that do not
/// parse are skipped (gc deals with them). Errors: io reading the directory.
Result<std::map<std::string, size_t>> layer_users(const std::string& run_dir);

}  // namespace dsec::mount
