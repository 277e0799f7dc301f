// Opening a sandbox to work on it: its state read once, its cgroup built once (and
// checked against the one create saved), and how to join it. Every door into a running
// sandbox (exec, cp, kill, stats, snapshot, reset, network changes) starts here.
#pragma once

#include <string>

#include "dsec/cgroup/cgroup.h"
#include "dsec/ns/join.h"
#include "dsec/sandbox/state.h"
#include "dsec/sys/error.h"

namespace dsec::sandbox {

/// What the opener needs of the sandbox.
enum class Need {
    any,           // a readable state, whatever it says
    running,       // the state says running (the join itself finds a dead init)
    running_init,  // running, and its init is still the process it started
};

/// An opened sandbox.
struct Opened {
    State state;
    cgroup::Cgroup cg;

    /// Joining its init's namespaces (`namespaces`: CLONE_NEW* to enter, 0 for all of a
    /// sandbox's) and its cgroup; the user namespace too when the sandbox has its own.
    ns::JoinSpec join(int namespaces, bool userns) const;
};

/// Opens sandbox `id`: loads its state once, checks it against `need`, and builds its
/// cgroup from this host's layout. When the state holds the cgroup create saved, the
/// two must agree: a sandbox is never joined to a group other than the one its limits
/// are on. Errors: bad_input (the id, or a state that does not parse), not_found,
/// not_running ("sandbox ID is not running (state S)"), corrupt (the saved cgroup is
/// not where this host's layout puts it: the layout changed since create), the layout
/// detection's.
Result<Opened> open_sandbox(const Paths& paths, const std::string& id, Need need);

/// Whether the cgroup saved at create names the same directories as `cg`.
bool same_cgroup(const SavedCgroup& saved, const cgroup::Cgroup& cg);

}  // namespace dsec::sandbox
