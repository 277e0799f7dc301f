// The compiled seccomp filter a policy's syscall rules make of a base profile.
#pragma once

#include <string>
#include <string_view>

#include "dsec/guard/policy.h"
#include "dsec/sys/error.h"

namespace dsec::guard {

/// The path of the compiled filter of seccomp_profile_with(base_profile, rules) under
/// `run_dir` (seccomp.h's cache), keyed by the base and the rules: once it is compiled,
/// a create neither parses nor rewrites the base profile again. Errors: those of
/// seccomp_profile_with and cached_seccomp_filter.
Result<std::string> cached_policy_filter(const std::string& run_dir, std::string_view base_profile,
                                         const SyscallRules& rules);

}  // namespace dsec::guard
