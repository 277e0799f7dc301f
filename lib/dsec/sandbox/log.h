// The command log of a sandbox: what was run in it and what came out, for replaying an
// agent's trajectory and auditing it.
//
//   $DSEC_RUN/sandboxes/<id>/log.jsonl   root's, mode 0600, one "log" record per line
//
// Every exec, session command and cp appends one line when it ends: one open, one
// write with O_APPEND (lines of concurrent commands never mix), no fsync. The file lies
// in the host's run directory, which nothing inside the sandbox can reach; it goes with
// the sandbox unless destroy is asked to keep it (keep_log).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/copy/sink.h"
#include "dsec/sandbox/exec.h"
#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// Bytes of stdout and of stderr a log record keeps (the hashes and counts cover all).
constexpr size_t kLogOutputCap = 4096;

/// $DSEC_RUN/sandboxes/<id>/log.jsonl
std::string log_file(const Paths& paths, const std::string& id);

/// The start of a log record: {"type":"log","v":1,"id","time","kind"}.
json log_record(const std::string& id, const std::string& kind);

/// The fields of a finished command: exit_code, signal, timed_out, duration_ms, bytes_in,
/// bytes_out, stdout_sha256, stderr_sha256, stdout and stderr (up to kLogOutputCap each,
/// "stdout_truncated"/"stderr_truncated" when cut), note.
void add_result(json& record, const ExecResult& result);

/// The record of one cp, worked or not: src and dst as the user wrote them ("ID:/path",
/// a host path or "-"), exit_code 0 or 1, bytes_in (into the sandbox) or bytes_out, or
/// the error's code.
json copy_log_record(const std::string& id, const std::string& src, const std::string& dst, bool into,
                     uint64_t duration_ms, const Result<copy::Stats>& outcome);

/// Appends `record` as one line. Errors: the failing open/write.
Status append_log(const Paths& paths, const std::string& id, const json& record);

/// The log's size in bytes now (0 when there is none): where the next record will start.
uint64_t log_position(const Paths& paths, const std::string& id);

/// Writes the log's records to `out_fd`, whole lines only. With `follow`, goes on with
/// what is appended until the sandbox is destroyed or interrupted() is seen. Errors:
/// not_found (no such sandbox and no log), the failing read/write.
Status print_log(const Paths& paths, const std::string& id, bool follow, int out_fd);

/// Copies the log to `dir`/<id>.log.jsonl (atomically; `dir` made if needed). No log:
/// nothing to do. Errors: the failing read/write.
Status keep_log(const Paths& paths, const std::string& id, const std::string& dir);

}  // namespace dsec::sandbox
