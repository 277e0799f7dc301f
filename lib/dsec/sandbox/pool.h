// Warm pools: sandboxes created ahead from one create configuration, each drawn once by
// `dsec-run run --pool`, so that a one-shot command waits for an exec into a running
// sandbox instead of for a create. A pool is a directory, <run>/pools/<key>, where key
// is a digest of everything the sandboxes were created with (layer digests, limits,
// policy and seccomp file contents, ...): a pool serves only runs asking for exactly that.
//
// Its entries are names, so every change is one rename or unlink:
//   <id>                              a ready sandbox, never used
//   .making.<id>.<pid>.<start>        being created by that process
//   .claimed.<id>.<pid>.<start>       drawn by that process, to be destroyed once used
//   pool.json                         {"size":N,"config":{...}}: what it is kept at
// Drawing is a rename of a ready entry to a claim (one process wins it). An entry whose
// process is gone (pid and start time, as /proc says) is swept by the next fill, drain
// or `dsec-reclaim gc`: its sandbox is destroyed, so a crash anywhere leaves nothing
// that is not found again.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sandbox/state.h"
#include "dsec/sys/error.h"

namespace dsec::sandbox::pool {

/// The label every pooled sandbox carries, valued with its pool's key.
inline constexpr const char* kLabel = "dsec.pool";

/// The directory holding a run directory's pools.
std::string pools_dir(const Paths& paths);

/// The pool of `key` (16 hex digits: key_of()).
struct Pool {
    std::string key;
    std::string dir;
};
Pool at(const Paths& paths, const std::string& key);

/// Whether `key` has a key's shape (16 lowercase hex digits), so that a key given on a
/// command line can never name a path outside the pools directory.
bool valid_key(const std::string& key);

/// The key of a create configuration: the first 16 hex digits of the SHA-256 of its
/// canonical JSON.
std::string key_of(const nlohmann::json& config);

/// What a pool holds right now.
struct Census {
    size_t size = 0;  // what fills keep it at (0: drained, or never filled)
    nlohmann::json config = nlohmann::json::object();
    std::vector<std::string> ready, making, claimed;  // sandbox ids
    std::vector<std::string> stale;  // entries whose process is gone (swept by the next fill)
    nlohmann::json last_error;       // note_error()'s record, or null
    /// {"type":"pool","key","size","ready","making","claimed","stale","config"} (and
    /// "last_error" when there is one)
    nlohmann::json to_record(const std::string& key) const;
};
/// Errors: not_found (no such pool), the failing read.
Result<Census> census(const Pool& pool);

/// The keys of the run directory's pools (none when there is no pools directory).
Result<std::vector<std::string>> keys(const Paths& paths);

/// Makes the pool if needed and sets the size fills keep it at, and its configuration.
Status configure(const Pool& pool, size_t size, const nlohmann::json& config);

/// Draws one ready sandbox whose init still runs: its id, or nullopt when none is ready.
/// Ready entries found dead on the way are claimed too and returned in `dead`, for the
/// caller to destroy and release like the one it used.
Result<std::optional<std::string>> claim(const Paths& paths, const Pool& pool, std::vector<std::string>& dead);

/// Drops this process's claim on `id` (after its sandbox was destroyed).
void release(const Pool& pool, const std::string& id);

/// A claim for a sandbox this process is about to make itself (none was ready), made
/// before the sandbox so that a crash at any point leaves it to a sweep.
Status adopt(const Pool& pool, const std::string& id);

/// Passes this process's claim on `id` to process `to_pid` (started at `to_start`): a
/// background child that finishes the work after this process exits.
Status hand_over(const Pool& pool, const std::string& id, int to_pid, unsigned long long to_start);

/// Keeps `e` as the pool's last error (a background refill has no one to tell);
/// census() shows it.
void note_error(const Pool& pool, const Error& e);

/// Makes sandboxes until the pool holds its size (ready plus being made by others),
/// after sweeping what crashed processes left. `make(id)` creates sandbox `id`; one
/// that fails is destroyed again and the fill stops at the first failure, returning it.
/// `progress(done, total)` is told of each one made. Returns how many were made.
using Make = std::function<Status(const std::string& id)>;
Result<size_t> fill(const Paths& paths, const Pool& pool, const Make& make,
                    const std::function<void(size_t, size_t)>& progress = {});

/// Sweeps entries whose process is gone and ready sandboxes whose init died, destroying
/// their sandboxes; removes a drained pool once nothing is left in it. Returns the ids
/// of the sandboxes destroyed. For `dsec-reclaim gc`, and the start of every fill.
Result<std::vector<std::string>> sweep(const Paths& paths, const Pool& pool);

/// Sets the pool's size to 0, destroys its ready sandboxes, waits (up to `wait_ms`)
/// for those being made to be published and destroys them too, and removes the pool
/// when no claim is left in it (a run still using a drawn sandbox destroys it itself).
/// Returns the ids destroyed. Errors: not_found, busy (still being made after wait_ms).
Result<std::vector<std::string>> drain(const Paths& paths, const Pool& pool, unsigned wait_ms = 60000);

}  // namespace dsec::sandbox::pool
