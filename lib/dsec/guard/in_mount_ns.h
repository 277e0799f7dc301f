// A short helper in a sandbox's mount namespace, for the mounts a policy makes there
// from outside (file rules, /etc/hosts).
#pragma once

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::guard {

/// What the helper runs: raw system calls only, on data prepared before; it reports once
/// with dsec_send_report() on `report_fd` and _exits.
using MountNsWork = void (*)(void* arg, int report_fd);

/// Runs `work(arg, report_fd)` in a helper that joined the mount namespace of the sandbox
/// whose init is `init_pid` (started at `init_start`, to refuse a reused pid), as host
/// root: its capabilities there come from the host user namespace, an ancestor of the
/// sandbox's (a user namespace could not be joined by a process that shares our memory).
/// The helper shares our memory (clone with CLONE_VM | CLONE_VFORK: no page tables to
/// copy, and we sleep until it is done) and has its own fs_struct, which setns into a
/// mount namespace needs. Errors: not_running, pipe2, mmap, clone, and the helper's
/// report (`what` names the step).
Status in_mount_namespace(int init_pid, unsigned long long init_start, MountNsWork work, void* arg, const char* what);

/// An O_PATH descriptor of the root directory of the sandbox whose init is `init_pid`
/// (started at `init_start`): its view of its files, mounts included, for lookups from
/// the host (openat2 with RESOLVE_IN_ROOT). Errors: not_running.
Result<Fd> open_init_root(int init_pid, unsigned long long init_start);

}  // namespace dsec::guard
