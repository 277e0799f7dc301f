// Who is using a sandbox right now, and when it was last used, without rewriting its state.
//
//   $DSEC_RUN/sandboxes/<id>/active   exec and cp hold a shared flock on it while they
//                                     run and set its mtime when they start: the last
//                                     exec, at the cost of one utimensat (no fsync).
//
// dsec-reclaim takes the same lock exclusively (without waiting) before it pauses a
// sandbox or destroys it for being idle: if an exec holds it, the sandbox is not idle.
// An exec that arrives while a pause is under way waits for it, then finds the sandbox
// frozen and thaws it before entering.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// An exec or cp in progress: holds the shared lock, and records the last use again when
/// it ends (idle time counts from the end of the last command).
class Use {
public:
    Use(fs::Lock lock, std::string file) : lock_(std::move(lock)), file_(std::move(file)) {}
    Use(Use&& other) noexcept : lock_(std::move(other.lock_)), file_(std::exchange(other.file_, {})) {}
    Use& operator=(Use&&) = delete;
    ~Use();

private:
    fs::Lock lock_;
    std::string file_;
};

/// Marks the start of an exec or cp in `id`: takes a shared lock on its activity file
/// (held as long as the returned Use lives), records now as the last use, and thaws
/// the sandbox if it was paused. Errors: not_found (no such sandbox), the failing
/// open/flock/thaw.
Result<Use> begin_use(const Paths& paths, const std::string& id);

/// The exclusive side, without waiting: an error with code "busy" while an exec or cp
/// runs in the sandbox.
Result<fs::Lock> try_claim_idle(const Paths& paths, const std::string& id);

/// Unix seconds of the last exec or cp (the activity file's mtime), or 0 when there was none.
int64_t last_use_unix(const Paths& paths, const std::string& id);

}  // namespace dsec::sandbox
