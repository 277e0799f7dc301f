// Numbers for benchmark records: percentiles of samples, ratios between interleaved runs,
// and what the machine is (cores, memory, kernel, cgroup layout, CPU model, the state
// directory's filesystem).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::bench {

using nlohmann::json;

/// Order statistics of a set of samples. All zero (n = 0) for an empty set.
struct Summary {
    size_t n = 0;
    double min = 0, median = 0, p90 = 0, p99 = 0, max = 0, mean = 0;

    /// {"unit":UNIT,"n":..,"min":..,"median":..,"p90":..,"p99":..,"max":..,"mean":..}
    json to_json(const std::string& unit) const;
};

/// The p-th percentile (0 <= p <= 100) of `sorted` (ascending), interpolated linearly
/// between the closest ranks (the "type 7" estimator R and numpy use). 0 when empty.
double percentile(const std::vector<double>& sorted, double p);

/// Sorts a copy of `samples` and summarises it.
Summary summarize(std::vector<double> samples);

/// Element-wise a[i] / b[i] for the pairs both have (b[i] > 0); for interleaved runs
/// where a[i] and b[i] ran back to back.
std::vector<double> pair_ratios(const std::vector<double>& a, const std::vector<double>& b);

/// The median of `samples` (0 when empty).
double median(std::vector<double> samples);

/// The filesystem a directory lies on, as it bears on sandbox create and destroy: its
/// type, and for ext4 whether it has a journal. Without one, ext4 skips every inode freed
/// in the last 60-360 s when it allocates a new one, so under churn (sandboxes made and
/// destroyed) each upper and work directory costs a scan (README, "The filesystem under
/// the uppers").
struct StateFs {
    std::string path;
    std::string type;                // "ext4", "xfs", "tmpfs", ... or the magic in hex
    std::optional<bool> journal;     // ext4 only
    json to_json() const;
};

/// Describes the filesystem of `dir` (errors: statfs's).
Result<StateFs> state_fs(const std::string& dir);

/// The ext4 journal state from /sys/fs/ext4/<dev>/journal_task's text: a pid when the
/// journal runs, "<none>" without one; nullopt when the text is neither.
std::optional<bool> ext4_journal_from_task(const std::string& text);

/// What the benchmark ran on.
struct Machine {
    unsigned cores = 0;
    uint64_t memory_bytes = 0;
    std::string kernel;
    std::string cgroup_mode;  // v1 | v2 | hybrid | none
    std::string cpu_model;
    std::optional<StateFs> state_fs;  // of $DSEC_ROOT, where uppers and layers are
    /// /sys/kernel/rcu_expedited (absent when unreadable): whether RCU grace periods end
    /// early, which makes a cgroup.procs write (runc's way into a cgroup) wait 0.1 ms
    /// instead of several.
    std::optional<bool> rcu_expedited;

    json to_json() const;
};

/// Fields of /proc/meminfo in bytes ("MemAvailable" -> 23...); "kB" values scaled.
std::map<std::string, uint64_t> parse_meminfo(const std::string& text);

/// The first "model name" (or "Processor"/"cpu model") of /proc/cpuinfo; "" when none.
std::string cpu_model_from_cpuinfo(const std::string& text);

/// The cgroup layout from /proc/self/mounts text: "v2" when /sys/fs/cgroup itself is
/// cgroup2, "hybrid" when v1 controllers are mounted beside a cgroup2 tree, "v1" when
/// only v1 is mounted, "none" otherwise.
std::string cgroup_mode_from_mounts(const std::string& mounts);

/// Reads the machine description from /proc and uname(2), and the filesystem of
/// $DSEC_ROOT when it is set and exists. Missing pieces stay empty.
Machine read_machine();

}  // namespace dsec::bench
