// clone3(2) for a child that shares our memory and starts on a stack of its own, as
// glibc's clone() does for clone(2), which has no CLONE_INTO_CGROUP: a child that starts
// in a cgroup of the unified tree needs no cgroup.procs write, whose global lock waits for
// an RCU grace period (6 to 14 ms a write on a host with rcu_expedited=0, the usual).
#pragma once

#include <linux/sched.h>

namespace dsec::ns {

/// Calls clone3 with `args` (whose stack and stack_size the child starts on) and runs
/// fn(arg) in the child, which exits with what fn returns. Returns the child's pid in the
/// parent; -1 with errno on failure, ENOSYS where this build has no such call (only
/// x86-64 has one: the caller then falls back on clone(2)).
long clone3_on_stack(clone_args* args, int (*fn)(void*), void* arg);

}  // namespace dsec::ns
