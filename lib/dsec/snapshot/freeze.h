// Holding a sandbox frozen while its upper is copied, and making sure it runs again.
//
// The freeze is marked in the sandbox's state ("snapshot": the pid and start time of the
// process holding it) before the cgroup is frozen, and a watchdog process (its own
// session, so a Ctrl-C to the pipeline does not reach it) thaws the sandbox the moment
// the holder dies without saying it is done, SIGKILL included. Should both die, the mark
// tells thaw_abandoned() (called by the next snapshot, fork or reset, and meant for gc)
// that the frozen state is a leftover and not a pause dsec-reclaim chose.
#pragma once

#include <sys/types.h>

#include "dsec/cgroup/cgroup.h"
#include "dsec/sandbox/state.h"
#include "dsec/sys/fd.h"

namespace dsec::snapshot {

/// A sandbox frozen for as long as this lives (unless it was frozen already, by a pause:
/// then it is left as it was). Call only while holding the sandbox's lock, from a
/// process that has not started threads (the watchdog is a fork of it).
class Freeze {
public:
    /// Marks the state, starts the watchdog and freezes the cgroup.
    /// Errors: the freezer's (unsupported, busy), io writing the state, the fork.
    static Result<Freeze> start(const sandbox::Paths& paths, sandbox::State& state, const cgroup::Cgroup& cg);
    Freeze(Freeze&& other) noexcept;
    Freeze& operator=(Freeze&&) = delete;
    ~Freeze();
    /// Thaws (when this froze), stops the watchdog and clears the mark. Safe to call twice.
    /// Errors: the thaw's or the state write's (the sandbox is thawed by the watchdog anyway).
    Status end();

private:
    Freeze(const sandbox::Paths& paths, sandbox::State& state, const cgroup::Cgroup& cg)
        : paths_(&paths), state_(&state), cg_(&cg) {}
    const sandbox::Paths* paths_;
    sandbox::State* state_;
    const cgroup::Cgroup* cg_;
    bool froze_ = false;
    bool active_ = false;
    Fd watchdog_;  // write end of the watchdog's pipe: a byte = done, EOF = holder died
    pid_t watchdog_pid_ = -1;
};

/// Thaws a sandbox left frozen by a snapshot whose holder is gone and clears the mark.
/// Returns whether it did. Call with the sandbox's lock held. Errors: the thaw's, io.
Result<bool> thaw_abandoned(const sandbox::Paths& paths, sandbox::State& state, const cgroup::Cgroup& cg);

}  // namespace dsec::snapshot
