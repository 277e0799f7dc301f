// Starting a sandbox's init: clone3 into new namespaces, straight into its cgroups.
#pragma once

#include <string>
#include <vector>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::ns {

/// The namespaces every sandbox gets (the cgroup namespace is entered after the init has
/// joined its cgroups, so that its root is the sandbox's own cgroup).
int sandbox_namespaces();

struct InitSpec {
    std::string program;             // path of dsec-init
    std::vector<std::string> argv;   // argv[0] included
    int mount_fd = -1;               // the detached root mount, passed as fd 3
    int keep_fd = -1;                // passed as fd 5 and held for the init's life (-1: none)
    int unified_cgroup_fd = -1;      // a cgroup2 directory: CLONE_INTO_CGROUP
    std::vector<int> join_fds;       // cgroup.procs files (v1) the child writes "0" into
};

/// A running init: host pid and a pidfd for it.
struct Started {
    int pid = 0;
    Fd pidfd;
};

/// Clones the init into new namespaces and waits until it reports ready (or fails).
/// Safe to call from several threads at once: the child only makes raw syscalls before
/// execve. Errors: the failing step inside the init (op, path, errno) or the clone.
Result<Started> start_init(const InitSpec& spec);

}  // namespace dsec::ns
