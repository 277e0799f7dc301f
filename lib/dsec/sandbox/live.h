// What dsec-run ls and inspect show of a sandbox: its state plus what the kernel says now.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// The live record of sandbox `id`: {"type":"sandbox","v":1,"id","state","age_s",
/// "last_exec","labels","memory","cpu_s","oom_kills"} (`full`: every field of the state
/// too, and "egress_denials" when it has egress). "state" is the recorded lifecycle,
/// except dead for a running sandbox whose init is gone and paused for a frozen one;
/// "memory" and "cpu_s" are null when the kernel has no figure (no cgroup). nullopt when
/// the sandbox was destroyed since it was listed (see listed_state). Errors: none.
std::optional<nlohmann::json> live_record(const Paths& paths, const std::string& id, bool full);

}  // namespace dsec::sandbox
