// Where a sandbox's pieces live and its state file, the one source of truth about it.
//
//   $DSEC_RUN/sandboxes/<id>/state.json   the sandbox record plus pid, pid_start, rootfs
//   $DSEC_RUN/sandboxes/<id>/lock         flock: create, destroy and state updates
//   $DSEC_RUN/sandboxes/<id>/root         where the overlay is attached (inside the
//                                         sandbox's mount namespace only)
//   $DSEC_ROOT/sandboxes/<id>/            upper and work (made by mount::make_rootfs)
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/cgroup/cgroup.h"
#include "dsec/sys/paths.h"
#include "dsec/sys/error.h"
#include "dsec/sys/fs.h"

namespace dsec::sandbox {

using nlohmann::json;

/// Path helpers over --root/--run.
struct Paths {
    std::string root;
    std::string run;
    explicit Paths(const dsec::Paths& p) : root(p.root), run(p.run) {}
    std::string sandboxes() const { return run + "/sandboxes"; }
    std::string state_dir(const std::string& id) const { return sandboxes() + "/" + id; }
    std::string state_file(const std::string& id) const { return state_dir(id) + "/state.json"; }
    std::string root_mount(const std::string& id) const { return state_dir(id) + "/root"; }
    std::string data_dir(const std::string& id) const { return root + "/sandboxes/" + id; }
    /// The cgroup parent of this run directory's sandboxes (cgroup::parent_for_run).
    std::string cgroup_parent() const;
};

/// The state file as JSON. Errors: not_found (no such sandbox), bad_input (unparsable).
Result<json> load(const Paths& paths, const std::string& id);

/// Writes the state atomically ("type":"sandbox" and "v":1 added).
Status save(const Paths& paths, json state);

/// Takes the sandbox's lock (waits). Errors: not_found when its directory is gone.
Result<fs::Lock> lock(const Paths& paths, const std::string& id);

/// Ids with a state directory, sorted.
std::vector<std::string> list_ids(const Paths& paths);

/// True when the state's init process is still the one it started ("pid", "pid_start").
bool init_alive(const json& state);

/// Sandbox `id`'s cgroup (in every hierarchy of this host's layout). Errors: the layout
/// detection's.
Result<cgroup::Cgroup> cgroup_of(const Paths& paths, const std::string& id);

/// The record shown to users: the state without internal fields.
json public_record(const json& state);

/// Now as RFC 3339 UTC, and as Unix seconds.
std::string now_rfc3339();
int64_t now_unix();

}  // namespace dsec::sandbox
