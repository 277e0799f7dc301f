// dsec-run reset: a sandbox back to its layers, in place. The init is killed (taking its
// pid namespace, every process of the sandbox, down with it) and the sandbox continues
// in a new init over an empty upper, in the same cgroup, with the same id, host id
// range, limits, security and policy. When a standby is ready (sandbox/standby.h) the
// new init is that one, continued: the reset is a kill, a signal and one state write.
// Else a new init starts at once (new namespaces, overlay, /proc, new root). What a create
// does besides starting the init (claiming ids, compiling seccomp, making cgroups,
// mounting layers) is never repeated, and the old sandbox's teardown (its namespaces,
// its overlay, its files) is not waited for: finish() removes the old upper once it is
// gone.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sandbox/state.h"
#include "dsec/sys/fd.h"
#include "dsec/sys/paths.h"

namespace dsec::snapshot {

/// A reset sandbox, and what is left of its previous life.
struct Reset {
    nlohmann::json record;              // the sandbox record: new "pid", "resets" counted, "reset" time
    Fd old_init;                        // pidfd of the killed init (empty when it was gone already)
    std::vector<std::string> leftovers;  // the old init's upper and work, to remove once it is gone
    bool from_standby = false;          // the new init was the standby
};

/// Resets the running sandbox `id`. Without a standby, its layers are mounted again
/// first where they were unmounted since its create (as `create --layers` mounts them).
/// Errors: not_found (unknown or destroyed), not_running (not in state "running"),
/// not_found/corrupt/mount_failed of a layer to mount again (the sandbox unharmed), the
/// failing start step (the sandbox is then left without an init, state "dead" in ls:
/// destroy it).
Result<Reset> reset(const dsec::Paths& paths, const std::string& id);

/// Makes a standby for the running sandbox `id` unless one is ready (mounting its
/// layers again as reset does), and returns its "standby" record. Errors: not_found,
/// not_running, busy (paused), a layer's, the failing start step (the sandbox itself is
/// unharmed).
Result<nlohmann::json> keep_standby(const dsec::Paths& paths, const std::string& id);

/// Waits (a few seconds at most) for the old init to be gone, then removes the old
/// upper. A leftover (a kill in between, a process that outlived the wait) is removed by
/// the next reset, by `dsec-reclaim gc` or by destroy. Errors: busy (the old init still
/// there), io.
Status finish(Reset& r);

}  // namespace dsec::snapshot
