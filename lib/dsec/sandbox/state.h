// Where a sandbox's pieces live and its state file, the one source of truth about it.
//
//   $DSEC_RUN/sandboxes/<id>/state.json   the sandbox record plus pid, pid_start, rootfs
//   $DSEC_RUN/sandboxes/<id>/lock         flock: create, destroy and state updates
//   $DSEC_RUN/sandboxes/<id>/root         where the overlay is attached (inside the
//                                         sandbox's mount namespace only)
//   $DSEC_ROOT/sandboxes/<id>/            upper and work (made by mount::make_rootfs)
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/cgroup/cgroup.h"
#include "dsec/mount/rootfs.h"
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
    std::string exec_socket_name() const { return "exec.sock"; }  // in state_dir: exec served by the init
    std::string data_dir(const std::string& id) const { return root + "/sandboxes/" + id; }
    /// The cgroup parent of this run directory's sandboxes (cgroup::parent_for_run).
    std::string cgroup_parent() const;
};

/// Where a sandbox is in its life. The state file holds creating, running, destroying
/// (and paused, reserved for a state a future pause may write); listings add dead (a
/// running sandbox whose init is gone), paused (its cgroup frozen) and broken (a state
/// file that cannot be read or does not parse).
enum class Lifecycle { creating, running, paused, destroying, dead, broken };

/// The lifecycle's name, as the state file and records spell it.
std::string_view lifecycle_name(Lifecycle l);

/// The lifecycle named `name`. Errors: bad_input naming it.
Result<Lifecycle> parse_lifecycle(std::string_view name);

/// The cgroup create made, as it saved it: the layout's mode and one directory per
/// hierarchy.
struct SavedCgroup {
    std::string mode;
    std::vector<std::string> dirs;
};

/// A standby init (sandbox/standby.h), made ahead so that a reset only has to swap to
/// it: its pid and start time, and the upper and work it runs over. pid 0: none.
struct Standby {
    int pid = 0;
    unsigned long long pid_start = 0;
    std::string upper, work;

    /// {"pid","pid_start","upper","work"}
    json to_record() const;
    /// Reads a state record's "standby"; a missing or malformed one gives pid 0.
    static Standby of(const json& state);
    /// True when its init still runs (not a zombie, not a reused pid).
    bool alive() const;
};

/// A sandbox's state file, typed. The fields below are the ones every door into a
/// sandbox reads; `extra` holds the record's other fields as written (the rootfs record,
/// limits, labels, security, egress, guard, env, ... which their areas read, and any a
/// newer build wrote that this one does not know), so that a load and a save never drop
/// a field.
struct State {
    std::string id;
    Lifecycle lifecycle = Lifecycle::creating;
    int pid = 0;                          // the init, 0 before it runs
    unsigned long long pid_start = 0;     // its start time (tells a reused pid)
    std::optional<SavedCgroup> cgroup;    // absent in a state written before the init ran
    Standby standby;                      // the next init a reset swaps to; pid 0: none
    int resets = 0;                       // how many resets it had
    std::string reset_at;                 // when the last was (RFC 3339), "" before any
    json extra = json::object();

    /// {"type":"sandbox","v":1,"id","state","pid","pid_start",["cgroup"],["standby"],
    /// ["resets","reset"],...extra}.
    json to_record() const;
    /// Parses a state record. Errors: bad_input naming the missing or malformed field
    /// (an unknown lifecycle among them).
    static Result<State> from_record(const json& j);

    /// The rootfs record's id ("" when absent) and its layers' digests.
    std::string rootfs_id() const;
    std::vector<std::string> layer_digests() const;
    /// The rootfs record, typed. Errors: bad_input (mount::Rootfs::from_record's).
    Result<mount::Rootfs> rootfs() const;
    /// The upper and work directories the init runs over (the rootfs record's; "" when
    /// absent).
    std::string upper() const;
    std::string work() const;
    /// Points the rootfs at another upper and work (a reset's swap to a new init).
    void set_upper(const std::string& upper, const std::string& work);
};

/// Sandbox `id`'s state. Errors: not_found (no such sandbox), bad_input (unparsable, or
/// not a state record).
Result<State> load(const Paths& paths, const std::string& id);

/// Writes the state atomically (fsynced: only create, destroy and the state's changes
/// write it, never an exec).
Status save(const Paths& paths, const State& state);

/// Which layers live sandboxes use: digest -> number of sandboxes with a live init whose
/// rootfs includes it, read from every state file that parses as JSON (whatever else it
/// holds); files that do not parse are skipped (gc deals with them).
/// Errors: io reading the sandboxes directory (none when it does not exist).
Result<std::map<std::string, size_t>> layer_users(const Paths& paths);

/// Takes the sandbox's lock (waits). Errors: not_found when its directory is gone.
Result<fs::Lock> lock(const Paths& paths, const std::string& id);

/// Ids with a state directory, sorted.
std::vector<std::string> list_ids(const Paths& paths);

/// True when the state's init process is still the one it started (pid, pid_start).
bool init_alive(const State& state);

/// Whether the sandbox has its own memory cgroup or its run directory's shared one: the
/// state's "memcg" field ("own" when absent or unreadable).
cgroup::Memcg memcg_of(const State& state);

/// Sandbox `id`'s cgroup (in every hierarchy of this host's layout), in the memcg mode
/// its state names (own when the state cannot be read). Errors: the layout detection's.
Result<cgroup::Cgroup> cgroup_of(const Paths& paths, const std::string& id);
/// The same for a state already loaded.
Result<cgroup::Cgroup> cgroup_of(const Paths& paths, const State& state);

/// The record shown to users: the state record.
json public_record(const State& state);

/// Now as RFC 3339 UTC, and as Unix seconds.
std::string now_rfc3339();
int64_t now_unix();

}  // namespace dsec::sandbox
