// Entering a running sandbox from outside: its cgroups, then its namespaces through a
// pidfd of its init, then a child inside its pid namespace.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::ns {

struct JoinSpec {
    int init_pid = 0;
    unsigned long long init_start = 0;        // to refuse a reused pid
    std::vector<std::string> cgroup_join;     // v1 files to write "0" into first (Cgroup::v1_join_files)
    std::string cgroup_unified;               // the unified tree's group ("" if none), entered at
                                              // the helper's clone (CLONE_INTO_CGROUP)
    int namespaces = 0;                       // CLONE_NEW* set for setns; 0: all of a sandbox's
    bool userns = true;                       // the sandbox has its own user namespace: join it too
    std::vector<int> keep_fds;                // descriptors `body` needs; every other one is closed
    bool body_execs = false;                  // `body` execs or _exits at once, touching no memory of
                                              // ours but its own stack: it then runs in our memory
                                              // until then (vfork), no page tables copied for it
    uint64_t timeout_ms = 0;                  // the longest wait for the child to be started (its
                                              // execve with body_execs); 0: none
};

/// A process started inside the sandbox: our child, with a pidfd; or, started by the
/// sandbox's init (exec served, confine.h), the init's child, whose end comes as a
/// dsec_exec_ended on `ended`.
struct Joined {
    int pid = 0;  // in our pid namespace; 0: a served command that ended before it was known
    Fd pidfd;
    Fd ended;
    std::shared_ptr<void> parent_thread;  // joined: the thread that is the child's parent (its
                                          // parent-death signal is that thread's end), kept
                                          // until this goes
};

/// Starts a helper (in our memory, from a thread of ours that sleeps until it has gone)
/// that closes every descriptor but `keep_fds`, joins the cgroups and the init's
/// namespaces (becoming root of the sandbox's user namespace, not host root), and from it
/// a child (re-parented to us with CLONE_PARENT) that runs `body` inside the sandbox;
/// `body` must not return (it confines itself and execs, or _exits). Makes the calling
/// process non-dumpable, so that neither helper nor child can be inspected from
/// inside before the child's execve. Errors: not_running (init gone), the failing
/// setns/cgroup step; timed_out (`timeout_ms` passed) or interrupted (SIGINT or SIGTERM)
/// before the child was started, the helper and child then killed and reaped.
Result<Joined> spawn_inside(const JoinSpec& spec, const std::function<void()>& body);

}  // namespace dsec::ns
