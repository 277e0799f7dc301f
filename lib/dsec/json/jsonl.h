// JSON Lines in and out: one object per line, each with "type" and "v":1.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::jsonl {

using nlohmann::json;

/// The record version this build writes and the newest it reads.
constexpr uint64_t kVersion = 1;

/// One record as a line (no newline): "type", "id" and "v" first (adding "v" when
/// missing), then the other fields in key order.
std::string line_of(const json& record);

/// Writes one record to stdout as a single line and flushes it. Adds "v":1 when
/// missing. Safe to call from several threads. A closed stdout (EPIPE) is an error.
Status emit(const json& record);

/// Reads records one line at a time. Blank lines are skipped. A record of type
/// "error" is passed through to stdout unchanged, remembered, and skipped, so the
/// first failure reaches the end of a pipeline (see upstream_failed()).
class Reader {
public:
    /// Reads from `in`; upstream error records are copied to `passthrough_fd`.
    explicit Reader(std::FILE* in = stdin, int passthrough_fd = 1) : in_(in), out_fd_(passthrough_fd) {}
    /// The next record; std::nullopt at end of input. A line that is not a JSON
    /// object gives an error with code "bad_input" naming the line number; a record
    /// whose "v" is newer than kVersion, "unsupported_version".
    Result<std::optional<json>> next();
    size_t line() const { return line_; }

private:
    std::FILE* in_;
    int out_fd_;
    size_t line_ = 0;
};

/// True once any Reader passed an upstream error record through.
bool upstream_failed();

/// The record's "type", or "" when it has none or it is not a string.
std::string type_of(const json& record);

/// Reads a string field, or an error naming the record's line and the field.
Result<std::string> get_string(const json& record, const char* field);

}  // namespace dsec::jsonl
