// The run directory's shared memory cgroup (create --memcg shared, cgroup/placement.h):
// made by the first create that asks for it, removed by the destroy (or gc) that finds
// no process left in it. A create holds the lock shared from making the group until its
// init is inside, so the removal, which takes it exclusively without waiting, never
// takes the group from under a create.
//
//   $DSEC_RUN/shared-memory.lock
#pragma once

#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// Taken by a create with a shared memory cgroup (waits). Errors: the lock file's.
Result<fs::Lock> hold_shared_memory(const Paths& paths);

/// Removes the run directory's shared memory group when nothing is left in it (rmdir
/// fails while a process is in it on v1, or a sandbox's group below it on v2) and no
/// create holds the lock. Returns the group's path when it was removed, "" otherwise
/// (also when the host has no cgroups or no such group).
std::string remove_shared_memory_if_unused(const Paths& paths);

}  // namespace dsec::sandbox
