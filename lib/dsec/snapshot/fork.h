// dsec-run fork: new sandboxes from a running one's current files, held to what it is
// held to. A fork is a snapshot (snapshot.h) and a create on the snapshot's parents plus
// the snapshot, with the create options read back from the source's state.
#pragma once

#include <nlohmann/json.hpp>

#include "dsec/sandbox/sandbox.h"

namespace dsec::snapshot {

/// The create options the sandbox described by `state` was made with: limits, disk cap,
/// scratch size, environment, workdir, user, labels, TTLs, policy and security. The id
/// and hostname are left empty (each fork gets its own). Errors: bad_input (a state
/// field of the wrong shape), not_found (dsec-init).
Result<sandbox::CreateOptions> options_like(const nlohmann::json& state);

}  // namespace dsec::snapshot
