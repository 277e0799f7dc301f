// Helpers shared by the files that read a policy document (policy.cc, policy_net.cc).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::guard {

/// The error of a bad policy: bad_input, "policy: FIELD: WHAT".
Error policy_error(const std::string& field, const std::string& what);

/// Refuses a non-object and keys outside `known`, naming `where`.
Status only_keys(const nlohmann::json& j, std::initializer_list<std::string_view> known, const std::string& where);

}  // namespace dsec::guard
