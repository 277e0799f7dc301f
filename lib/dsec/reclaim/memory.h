// What a sandbox holds in memory and how the host is doing: per-sandbox resident, swapped
// and page-cache bytes from its memory cgroup (v1 or v2), host totals from /proc/meminfo
// and memory pressure (PSI) from /proc/pressure/memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dsec/cgroup/detect.h"
#include "dsec/sys/error.h"

namespace dsec::reclaim {

/// One memory cgroup's use, in bytes.
struct MemoryUse {
    uint64_t charged = 0;     // all the group is charged for (usage_in_bytes, memory.current)
    uint64_t resident = 0;    // anonymous memory in RAM (v1 total_rss, v2 anon)
    uint64_t page_cache = 0;  // file pages (v1 total_cache, v2 file)
    uint64_t swapped = 0;     // anonymous memory in swap (v1 total_swap, v2 memory.swap.current)
    /// {"memory","resident","page_cache","swapped"}.
    nlohmann::json to_json() const;
};

/// Reads `key value` lines ("memory.stat", "/proc/meminfo" without the kB) into `key`'s value; 0 when absent.
uint64_t stat_value(std::string_view text, std::string_view key);

/// Parses a memory.stat text: `v1` uses the hierarchical total_* keys.
MemoryUse parse_memory_stat(std::string_view text, bool v1);

/// The memory cgroup directory of sandbox `id` under `parent`, in whichever hierarchy holds
/// the memory controller ("" when none does).
std::string memory_dir(const cgroup::Layout& layout, const std::string& parent, const std::string& id);

/// The use of the memory cgroup at `dir`. Errors: not_found (no such group), io.
Result<MemoryUse> memory_use(const cgroup::Layout& layout, const std::string& dir);

/// Parses /proc/pressure/* text into {"some":{"avg10","avg60","avg300","total"},"full":{...}}.
nlohmann::json parse_psi(std::string_view text);

/// Host totals: {"type":"host","v":1,"memory_total","memory_available","swap_total",
/// "swap_free","page_cache","psi_memory"} (bytes; psi absent when the kernel has none).
nlohmann::json host_record();

}  // namespace dsec::reclaim
