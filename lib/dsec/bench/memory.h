// Host memory as the kernel accounts it, for the density benchmark: MemAvailable and
// Committed_AS from /proc/meminfo, a process's Pss, and a cgroup's memory usage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dsec/sys/error.h"

namespace dsec::bench {

/// The host-wide numbers, in bytes.
struct HostMemory {
    uint64_t available = 0;   // MemAvailable
    uint64_t committed = 0;   // Committed_AS
    uint64_t slab = 0;        // Slab: kernel objects, reclaimable or not
    uint64_t sunreclaim = 0;  // SUnreclaim: the part the kernel cannot give back
};

/// Reads /proc/meminfo. Errors: io.
Result<HostMemory> host_memory();

/// Pss of process `pid` in bytes (/proc/PID/smaps_rollup). Errors: not_found when gone.
Result<uint64_t> process_pss(int pid);

/// The memory cgroup of `pid` from /proc/PID/cgroup text: the v1 "memory" controller's
/// path when present, else the v2 ("0::") path. "" when neither is there.
std::string memory_cgroup_of(const std::string& proc_cgroup_text);

/// Memory charged to the memory cgroup of `pid`: memory.usage_in_bytes under
/// /sys/fs/cgroup/memory (v1) or memory.current under the v2 mount. Errors: not_found.
Result<uint64_t> cgroup_memory_of(int pid);

/// Memory charged to the memory cgroups of `pids`, each group counted once (sandboxes
/// sharing one memory cgroup would otherwise count it once per sandbox). Unreadable ones
/// count 0.
uint64_t cgroup_memory_of(const std::vector<int>& pids);

}  // namespace dsec::bench
