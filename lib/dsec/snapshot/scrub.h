// The paths a policy says to scrub from a snapshot: its "scrub" array of absolute paths
// inside the sandbox. Only that key is read; the rest of the policy is dsec-guard's.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::snapshot {

/// The "scrub" paths of a parsed policy, as clean relative paths ("/a//b/" -> "a/b"),
/// sorted, without duplicates; none when the key is absent.
/// Errors: bad_input (not an array of absolute path strings, "/" itself, "..").
Result<std::vector<std::string>> scrub_paths(const nlohmann::json& policy);

/// Reads the policy file at `path` and returns its scrub paths.
/// Errors: not_found, bad_input (does not parse, or as above).
Result<std::vector<std::string>> scrub_paths_from_file(const std::string& path);

}  // namespace dsec::snapshot
