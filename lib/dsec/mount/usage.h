// Whether a process still is the one recorded: the pid and start time that sandbox
// states, sessions and snapshot marks keep.
#pragma once

#include <string>

#include "dsec/sys/error.h"

namespace dsec::mount {

/// True when the process `pid` exists, is not a zombie and, if `start` is non-zero, started at `start`
/// (clock ticks since boot, as /proc/<pid>/stat says).
bool process_alive(int pid, unsigned long long start);

/// The start time of `pid` from /proc/<pid>/stat, or 0 when it is gone.
unsigned long long process_start(int pid);

}  // namespace dsec::mount
