// A dsec-guard policy taken into a create: read, checked against what this build
// applies, and its limits merged with the command line's.
#pragma once

#include <string>

#include "dsec/guard/policy.h"
#include "dsec/sandbox/sandbox.h"

namespace dsec::sandbox {

/// Lowers the limits in `o` to the policy's where the policy's are tighter (a limit
/// `o` leaves unset takes the policy's); never raises one.
void tighten_limits(const guard::PolicyLimits& limits, CreateOptions& o);

/// Reads the policy at `path` (made absolute) into `o.policy` and `o.guard` and tightens
/// `o`'s limits. Errors: those of guard::load_policy; unsupported when the policy asks
/// for what this build does not apply (domain names), so that no sandbox runs with
/// a policy applied in part; bad_input for syscall rules with --seccomp unconfined and
/// for file rules with SYS_ADMIN kept (`o.security.caps` is read: set it first).
Status use_policy(const std::string& path, CreateOptions& o);

/// The policy a sandbox was created with, as its state records it ("guard"): its file and
/// syscall rules, for whatever starts that sandbox's processes again (reset) or starts
/// others like it (fork). Null when it has none. Errors: bad_input (a malformed record).
Result<std::shared_ptr<const guard::Policy>> policy_of_state(const nlohmann::json& state);

}  // namespace dsec::sandbox
