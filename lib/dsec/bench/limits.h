// Raising the host limits a density run at scale needs (pid_max, file-max, open files,
// ...) only when asked, recording each change, and putting every one back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::bench {

/// One changed limit: a sysctl ("kernel.pid_max") or an rlimit ("RLIMIT_NOFILE").
struct LimitChange {
    std::string name;
    uint64_t before = 0;
    uint64_t after = 0;
    std::string note;  // why `after` is short of what was wanted, when it is
};

/// The limits a run of `sandboxes` idle sandboxes needs, as (name, minimum) pairs:
/// a few pids, threads and files per sandbox plus what the host already uses.
std::vector<std::pair<std::string, uint64_t>> limits_for(uint64_t sandboxes);

/// Raises limits and restores them when destroyed (the destructor runs on SIGINT too,
/// since the benchmark loops stop at interrupted() and unwind).
class RaisedLimits {
public:
    RaisedLimits() = default;
    RaisedLimits(RaisedLimits&&) = delete;
    ~RaisedLimits() { restore(); }

    /// Raises each limit that is below its minimum (never lowers one). An rlimit whose
    /// hard limit may not be raised (no CAP_SYS_RESOURCE) goes up to the hard limit and
    /// the change says so.
    /// Errors: io naming the sysctl or rlimit that could not be set (earlier changes
    /// stay recorded and are restored).
    Status raise(const std::vector<std::pair<std::string, uint64_t>>& wanted);
    /// Puts every changed limit back, last changed first. Idempotent.
    void restore();
    /// [{"name":..,"before":..,"after":..}] for the bench record.
    nlohmann::json to_json() const;

private:
    std::vector<LimitChange> changes_;
};

/// The current value of a sysctl ("kernel.pid_max") or rlimit ("RLIMIT_NOFILE", soft).
Result<uint64_t> read_limit(const std::string& name);

}  // namespace dsec::bench
