// TEMPORARY stand-in until the seccomp compiler lands: no filter.
#pragma once
#include <string>
#include <string_view>
#include "dsec/sys/error.h"
namespace dsec::guard {
inline std::string_view default_seccomp_profile() { return "{}"; }
inline Result<std::string> cached_seccomp_filter(const std::string&, std::string_view) { return std::string(); }
inline Result<std::string> read_seccomp_filter(const std::string&) { return std::string(); }
}  // namespace dsec::guard
