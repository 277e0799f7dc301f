// Where a detached exec's files live and how its state is read: shared by its start,
// logs, wait and the listing (detached.h describes the layout).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dsec/sandbox/detached.h"

namespace dsec::sandbox::detached_files {

/// $DSEC_RUN/sandboxes/<id>/execs/<key>
std::string dir(const Paths& paths, const std::string& id, const std::string& key);

/// The exec's record (exec.json). Errors: not_found (no such sandbox or exec), bad_input.
Result<json> load(const Paths& paths, const std::string& id, const std::string& key);

/// The record shown to users: exec.json without what only dsec-run needs, with "state"
/// ("running", "exited" with "exit_code", "failed" with "error", or "lost").
json public_record(const Paths& paths, const std::string& id, json record);

/// True while sandbox `id` exists and is not being destroyed (checked under its lock):
/// a new file may be made in its state directory.
bool may_add(const Paths& paths, const std::string& id);

/// Writes `record` to `path` atomically under the sandbox's lock, unless it is being
/// destroyed or gone. Errors: not_found, not_running (being destroyed), the failing write.
Status write_if_kept(const Paths& paths, const std::string& id, const std::string& path, const json& record);

}  // namespace dsec::sandbox::detached_files
