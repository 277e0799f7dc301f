// The density benchmark's arithmetic: when to sample memory, memory per sandbox from the
// kernel's accounts, the memory budget, and the latency figures and ratios of the
// record. Pure: dsec-bench density gathers the numbers, this turns them into figures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/bench/memory.h"

namespace dsec::bench {

/// Whether memory is sampled with `alive` sandboxes out of `n`: at 1, 2, 5, 10, 20,
/// 50, ... and at every tenth of `n` (and at `n`).
bool density_sample_at(size_t alive, size_t n);

/// Host memory now against the start, by sandbox, by each of the kernel's accounts; and
/// the marginal cost: the change since the previous sample over the sandboxes added since.
struct MemorySample {
    size_t alive = 0;
    double available = 0, committed = 0, cgroup = 0, pss = 0;  // bytes per sandbox
    double slab = 0, sunreclaim = 0;                           // kernel slab growth per sandbox
    double marginal_available = 0, marginal_slab = 0;           // bytes per sandbox added
    HostMemory host;                                            // the reading (zeros: unread)
    /// {"alive","memavailable","committed","cgroup","pss_init","slab","sunreclaim",
    /// "marginal_memavailable","marginal_slab"}
    nlohmann::json to_json() const;
};

/// The sample for `alive` sandboxes: the host's change from `before` to `now` (nullptr:
/// not readable, left 0) over `alive`, the sums of the inits' cgroup memory and Pss over
/// the `inits` counted in them, and the change from `prev` (nullptr: from `before` with
/// none alive) over the sandboxes added since.
MemorySample memory_sample(size_t alive, const HostMemory& before, const HostMemory* now, double cgroup_sum,
                           double pss_sum, size_t inits, const MemorySample* prev = nullptr);

/// True once the host's MemAvailable has dropped by `budget` bytes or more (0: no budget).
bool over_budget(const HostMemory& before, const HostMemory& now, uint64_t budget);

/// The record's create latency figures from the per-create times `ms` with `alive`
/// sandboxes at the end: "figures" (create_ms, create_ms_first and create_ms_last: the
/// first and last ten; create_ms_first_1pct and create_ms_last_1pct: the first and last
/// 1 %, at least ten) and "ratios" ("last/first", "last/first 1%").
/// {"figures":{...},"ratios":{...}}.
nlohmann::json density_latency(const std::vector<double>& ms, size_t alive);

/// Per-create latencies (alive, ms), in order, as at most about `buckets` points: each
/// run of consecutive creates becomes (its mean alive, its `pct`-th percentile ms). Runs
/// are count/buckets creates long (at least 1), so a plot of 10,000 creates stays small.
std::vector<std::pair<double, double>> bucketed(const std::vector<std::pair<double, double>>& latency, size_t buckets,
                                                double pct);

}  // namespace dsec::bench
