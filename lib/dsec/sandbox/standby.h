// A standby: a sandbox's next init, made ahead so that a reset only has to swap to it.
//
// It is started exactly as the running init was (same layers, host id range, limits,
// security and policy mounts) but with namespaces of its own and over an empty upper of
// its own ($DSEC_ROOT/sandboxes/<id>/standby-<n>/{upper,work}), in the sandbox's cgroup
// (its memory and its one task count against the sandbox's limits), and then stopped
// (SIGSTOP) until a reset continues it. The running sandbox cannot reach it: it is not
// in the sandbox's pid namespace (nothing inside can name or signal it), it shares no
// mount, network, ipc, uts or user namespace, no /tmp or /dev/shm and no upper.
//
// The state names it (State::standby, a Standby); each init's
// upper is the one the state's rootfs names, so that one atomic state write commits a
// swap. What a killed reset leaves (a standby init the state does not name, an upper
// directory named by neither the rootfs nor the standby) is removed by sweep_standbys(),
// which making a standby and `dsec-reclaim gc` call; destroy kills the standby with the cgroup and
// removes its upper with the sandbox's directory.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dsec/cgroup/cgroup.h"
#include "dsec/mount/rootfs.h"
#include "dsec/sandbox/start.h"
#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// The start of the init of the sandbox whose state is `state`, as create made it (ids,
/// security, limits, hostname, cpu class, binds). Errors: security_from_state's, find_init's.
Result<StartSpec> start_spec_of(const Paths& paths, const State& state);

/// Starts a new init for the sandbox `state` describes over a fresh empty upper (a new
/// standby-<n> directory, or a new tmpfs with --disk), in `cg`, with the policy's file
/// rules applied, and returns it running. The caller holds the sandbox's lock. On error
/// nothing of it is left (init killed, directory removed). Errors: the failing start,
/// mkdir or policy step.
Result<Standby> start_next_init(const Paths& paths, const State& state, const cgroup::Cgroup& cg);

/// start_next_init(), then stopped until a reset uses it. Errors: start_next_init's, kill.
Result<Standby> make_standby(const Paths& paths, const State& state, const cgroup::Cgroup& cg);

/// Removes what killed resets left of sandbox `state` (its lock held): inits (pid 1 of
/// a pid namespace of their own) in its cgroup that are neither its init nor its
/// standby, killed; upper directories in its data directory that neither its rootfs
/// nor its standby names, removed; so are exec sockets of standbys in its state
/// directory other than its standby's. Returns what it found, one {"kind","path"} each
/// ("orphan_standby" with the pid as path, "orphan_upper", "orphan_socket"), removed
/// unless `dry_run`.
/// Errors: the first failing removal, after trying every one.
Result<nlohmann::json> sweep_standbys(const Paths& paths, const State& state, const cgroup::Cgroup& cg,
                                      bool dry_run = false);

/// The name in the sandbox's state directory of the exec socket of the standby whose
/// upper is `upper` (standby-<n>.exec.sock); a reset renames it to exec.sock when its
/// init takes over.
std::string standby_exec_socket(const std::string& upper);

/// True when `pid` is pid 1 of a pid namespace below ours (an init, as NSpid says).
bool is_namespace_init(int pid);

/// The directories a reset leaves of an init's upper once that init is gone: its
/// standby-<n> directory, or the upper and work themselves for the rootfs's first.
std::vector<std::string> upper_leftovers(const std::string& upper, const std::string& work);

}  // namespace dsec::sandbox
