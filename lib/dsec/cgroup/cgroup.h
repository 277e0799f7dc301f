// A sandbox's cgroup: `<parent>/<id>` (parent "dsec" by default) in each hierarchy dsec uses (the v1 memory, cpu,
// cpuacct, pids and freezer hierarchies, and the unified tree when there is one; on a
// hybrid host whose unified tree freezes, kills and counts CPU itself, not cpuacct and
// freezer); with a shared memory cgroup, placement.h says what changes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dsec/cgroup/detect.h"
#include "dsec/cgroup/placement.h"
#include "dsec/sys/error.h"

namespace dsec::cgroup {

/// Resource limits; 0 means "no limit".
struct Limits {
    uint64_t memory = 0;  // bytes
    double cpus = 0;      // CPUs' worth of time per period
    uint64_t pids = 0;    // tasks
    uint64_t cpu_weight = 0;  // share of contended CPU, v2 scale (1-10000, default 100)
};

/// The cgroup of one sandbox. Holds only paths: nothing is removed unless remove() is
/// called, so it can describe a half-made cgroup as well as a whole one.
class Cgroup {
public:
    /// `parent` is parent_for_run() of the sandbox's run directory; `memcg` whether its
    /// memory cgroup is its own or the run directory's shared one (placement.h).
    Cgroup(Layout layout, const std::string& parent, std::string id, Memcg memcg = Memcg::own);

    /// Which of its groups create() makes (a sandbox's start makes the late part while its
    /// init sets itself up, sandbox/start.h). Early: the unified tree's group (entered at
    /// the clone), the one in the memory hierarchy (all the init's memory is charged to it
    /// from the start) and the shared memory group; late: the other v1 hierarchies'.
    enum class Part { all, early, late };

    /// Creates the directories of `part` (parents and the shared memory group too) and
    /// writes their limits. Errors: the failing mkdir or write with its path;
    /// "unsupported" when a limit has no controller or the layout cannot share the memory
    /// cgroup; usage for a memory limit on a shared memory cgroup.
    Status create(const Limits& limits, Part part = Part::all) const;

    /// The sandbox's own directories, one per hierarchy (some may not exist); never the
    /// shared memory group.
    const std::vector<std::string>& dirs() const { return placement_.dirs; }
    /// Its directories in v1 hierarchies dsec no longer makes groups in (Placement::unused):
    /// present only for a sandbox an older dsec made; remove() takes them too.
    const std::vector<std::string>& unused_dirs() const { return placement_.unused; }
    /// The unified-tree directory ("" without cgroup2), usable with CLONE_INTO_CGROUP.
    const std::string& unified_dir() const { return placement_.unified; }
    /// The files a process writes "0" into to join the v1 groups it belongs in (those of
    /// dirs(), plus the shared memory group on v1): `tasks`,
    /// which moves only the writing thread, so the kernel skips the global threadgroup
    /// lock that a cgroup.procs write takes, whose taking waits for an RCU grace period (6
    /// to 14 ms a write on a host with rcu_expedited=0, the usual). For a process of one
    /// thread only, which every joiner of ours is: a new child, before it starts any. The
    /// unified tree's group, unified_dir(), is entered at the clone (CLONE_INTO_CGROUP).
    /// `part`: the files of those groups only.
    std::vector<std::string> v1_join_files(Part part = Part::all) const;
    /// Own or shared memory cgroup.
    Memcg memcg() const { return memcg_; }
    /// The shared memory group ("" with Memcg::own).
    const std::string& shared_dir() const { return placement_.shared; }
    /// Whether the v1 hierarchies must be joined by writing the pid (always except pure v2).
    bool needs_v1_join() const { return layout_.mode != Mode::v2; }

    /// Memory the sandbox uses now, in bytes: what its memory cgroup is charged with, or
    /// with a shared one the sum of its processes' Pss (/proc/PID/smaps_rollup; tmpfs
    /// files no process maps are not in it). Errors: io.
    Result<uint64_t> memory_usage() const;
    /// CPU time used so far, in nanoseconds. Errors: io.
    Result<uint64_t> cpu_usage_ns() const;
    /// How many times the OOM killer killed a process in its memory cgroup (0 when
    /// unknown); with a shared one, a process of any sandbox sharing it.
    uint64_t oom_kills() const;
    /// Pids in the cgroup (from the first hierarchy that exists).
    std::vector<int> pids() const;

    /// Stops every process inside and waits until the kernel reports the group frozen:
    /// cgroup.freeze on the unified tree where it has one, else the v1 freezer.
    /// Errors: unsupported (no freezer), busy (not frozen within seconds), io.
    Status freeze() const;
    /// Lets the processes run again. Thawing a group that is not frozen is fine.
    Status thaw() const;
    /// True when the group is frozen (or being frozen).
    bool frozen() const;

    /// Kills every process inside and waits until none is left: cgroup.kill where the
    /// unified tree has it, else freeze, SIGKILL each pid, thaw, until empty.
    /// Errors: busy when processes survive for seconds.
    Status kill_all() const;
    /// kill_all(), then removes every directory. Missing directories are fine.
    Status remove() const;

private:
    std::string dir_for(const std::string& controller) const;
    bool in_part(const std::string& dir, Part part) const;
    Status create_dirs(const Limits& limits, Part part) const;
    Layout layout_;
    std::string parent_;
    std::string id_;
    Memcg memcg_;
    Placement placement_;
    Status placed_;  // place()'s error, returned by create()
};

/// The group below each hierarchy's root under which the sandboxes of one run directory
/// live: "dsec" for the default /run/dsec, else "dsec-" and 12 hex digits of the run
/// directory's sha256. Derived, so every tool using the same --run finds the same group,
/// and a test's or benchmark's private run directory gets a group it can remove.
std::string parent_for_run(const std::string& run_dir);

/// Removes the parent group `name` from every hierarchy where it is empty (rmdir only
/// succeeds then); a parent that still holds sandboxes is left alone.
void remove_parent_if_empty(const std::string& name);

}  // namespace dsec::cgroup
