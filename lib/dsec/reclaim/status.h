// dsec-reclaim status: each sandbox's state, idle time and memory, as the kernel sees it now.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "dsec/sandbox/state.h"
#include "dsec/sys/paths.h"

namespace dsec::reclaim {

/// {"type":"sandbox","v":1,"id","state","class","age_s","idle_s","memory","resident",
/// "page_cache","swapped"}: state is the recorded one, except "dead" for a running sandbox whose init is
/// gone (zombies included) and "paused" for a frozen one; idle_s counts from the last exec
/// or cp (else from create). Memory fields are absent when the group has none. A state
/// directory without a state file is "creating" (see sandbox::listed_state); nullopt when
/// the sandbox was destroyed since it was listed.
std::optional<nlohmann::json> sandbox_status(const dsec::Paths& paths, const std::string& id);

/// The live state name alone (see sandbox_status).
std::string live_state(const dsec::Paths& paths, const std::string& id, const sandbox::State& state);

}  // namespace dsec::reclaim
