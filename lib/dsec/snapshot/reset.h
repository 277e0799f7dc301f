// dsec-run reset: a sandbox back to its layers, in place. The init is killed (taking its
// pid namespace, every process of the sandbox, down with it), the upper is swapped for
// an empty one and a new init starts in the same cgroup, with the same id, host id range,
// limits, security and policy. What a create does besides starting the init (claiming
// ids, compiling seccomp, making cgroups, mounting layers, making the upper) is not
// repeated, and the old sandbox's teardown (its namespaces, its overlay, its files) is
// not waited for: the new init starts beside the dying one, and finish() removes the old
// upper once it is gone.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dsec/sandbox/state.h"
#include "dsec/sys/fd.h"

namespace dsec::snapshot {

/// A reset sandbox, and what is left of its previous life.
struct Reset {
    nlohmann::json record;  // the sandbox record: new "pid", "resets" counted, "reset" time
    Fd old_init;            // pidfd of the killed init (empty when it was gone already)
    std::string old_upper;  // the old upper and work, moved aside ("" with --disk: a tmpfs)
};

/// Resets the running sandbox `id`. Errors: not_found (unknown or destroyed),
/// not_running (not in state "running"), the failing start step (the sandbox is then
/// left without an init, state "dead" in ls: destroy it).
Result<Reset> reset(const sandbox::Paths& paths, const std::string& id);

/// Waits (a few seconds at most) for the old init to be gone, then removes the old
/// upper. A leftover (a kill in between, a process that outlived the wait) is removed by
/// the next reset or by destroy. Errors: busy (the old init still there), io.
Status finish(Reset& r);

}  // namespace dsec::snapshot
