// dsec-reclaim idle and resume: sandboxes idle for long enough are frozen (cgroup freezer,
// v1 or v2) and their memory pushed out; any exec or cp resumes them (sandbox/activity.h).
//
// Pushing out: memory.reclaim on a v2 memory controller; on v1, MADV_PAGEOUT over every
// mapping of every process in the group (process_madvise), then a brief squeeze of the
// group's limit down to its anonymous memory so the kernel drops its page cache, and the
// limit put back. Anonymous memory leaves RAM only when there is swap (see swap.h).
#pragma once

#include <cstdint>
#include <string>

#include "dsec/cgroup/cgroup.h"
#include "dsec/reclaim/memory.h"
#include "dsec/reclaim/report.h"
#include "dsec/sys/paths.h"

namespace dsec::reclaim {

/// Which sandboxes count as idle, and whether to pause them.
struct IdleOptions {
    int64_t after_s = 600;     // no exec or cp for this long
    int64_t sample_ms = 500;   // CPU use is measured over this long
    double flat_cpu = 0.01;    // below this share of one CPU over the sample, the CPU use is flat
    bool dry_run = false;
};

/// True when `used_ns` of CPU over `sample_ms` is below `flat_cpu` of one CPU. Pure.
bool cpu_flat(uint64_t used_ns, int64_t sample_ms, double flat_cpu);

/// Pauses every running sandbox idle that long (no exec or cp running or started for
/// after_s, CPU use flat over the sample) and pushes its memory out; one
/// {"type":"event","event":"paused","reclaimed",...,"before":{...},"after":{...}} each.
/// Errors: only when `report` cannot emit.
Status pause_idle(const dsec::Paths& paths, const IdleOptions& options, const Report& report);

/// Pushes out what the (frozen) group at `memory_dir` holds; returns its use after.
/// Errors: the failing write (v2), unsupported without a memory controller.
Result<MemoryUse> push_out(const cgroup::Layout& layout, const cgroup::Cgroup& cg, const std::string& memory_dir);

/// Thaws sandbox `id`: {"type":"event","event":"resumed","id","was_paused"}.
/// Errors: not_found (no such sandbox), the failing thaw.
Result<json> resume(const dsec::Paths& paths, const std::string& id);

}  // namespace dsec::reclaim
