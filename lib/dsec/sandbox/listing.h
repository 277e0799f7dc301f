// A sandbox's state as listings see it (dsec-run ls and inspect, dsec-reclaim status).
// They run beside create and destroy, so a state directory may have no state file yet
// (create makes the directory, its claim on the id, before it writes the state) or no
// more (destroy removes the directory's files one by one), or be gone altogether.
#pragma once

#include <optional>
#include <string>

#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// The state of sandbox `id` for a listing: its state file; {id, creating} when the
/// directory holds no state file (a create on its way, or a destroy removing it; gc's
/// half_created once past its grace); {id, broken} only when the
/// state file cannot be read or does not parse; nullopt once the directory is gone
/// (destroyed since it was listed). Errors: none, they are the states above.
std::optional<State> listed_state(const Paths& paths, const std::string& id);

}  // namespace dsec::sandbox
