// dsec-run reset: a sandbox back to its layers, in place. Every process is killed, the
// upper is swapped for an empty one and a new init starts in the same cgroup, with the
// same id, host id range, limits, security and policy. What a create does besides
// starting the init (claiming ids, compiling seccomp, making cgroups, mounting layers,
// making the upper) is not repeated.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// Resets the running sandbox `id` and returns its record (new "pid", "resets" counted).
/// The old upper is removed after the new init runs. Errors: not_found (unknown or
/// destroyed), not_running (not in state "running"), busy (processes that do not die),
/// the failing start step (the sandbox is then left with no init: destroy it).
Result<nlohmann::json> reset(const Paths& paths, const std::string& id);

}  // namespace dsec::sandbox
