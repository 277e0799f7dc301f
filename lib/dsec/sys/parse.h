// Parsing of the human-friendly values the tools take: sizes (512M), CPU counts (0.5),
// durations (30m), counts, users (1000:1000), K=V environment entries and k=v labels.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dsec/sys/error.h"

namespace dsec::parse {

/// "512M", "2G", "1.5G", "4096", "64k" -> bytes (binary units, K/M/G/T, optional "i"/"B").
/// Errors: usage naming the value.
Result<uint64_t> parse_size(const std::string& text);

/// "0.5", "2" -> CPUs (positive, at most 4096). Errors: usage.
Result<double> parse_cpus(const std::string& text);

/// "30m", "1h30m", "45s", "500ms", "2d", "90" (seconds) -> milliseconds. Errors: usage.
Result<uint64_t> parse_duration_ms(const std::string& text);

/// Milliseconds in the form parse_duration_ms reads: "1s", "1h30m", "1m500ms", "0s".
std::string format_duration_ms(uint64_t ms);

/// A positive whole number ("--pids 64"). Errors: usage.
Result<uint64_t> parse_count(const std::string& text, const char* what);

/// A numeric "UID[:GID]" (GID defaults to UID).
struct User {
    unsigned uid = 0;
    unsigned gid = 0;
};
/// Errors: usage.
Result<User> parse_user(const std::string& text);
/// Checks a --user value's form: UID, NAME, with :GID or :GROUP (names as useradd
/// takes them); names are resolved later, inside the sandbox (sandbox/user.h).
Status check_user(const std::string& text);
/// True when `text` is numeric (UID or UID:GID), so parse_user takes it.
bool is_numeric_user(const std::string& text);

/// Each entry is K=V with a non-empty K. Errors: usage naming `option`.
Status check_env(const std::vector<std::string>& env, const char* option);

/// "k=v" labels (a later key wins); the key is non-empty. Errors: usage.
Result<std::map<std::string, std::string>> parse_labels(const std::vector<std::string>& labels);

}  // namespace dsec::parse
