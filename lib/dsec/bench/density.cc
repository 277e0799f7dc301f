#include "dsec/bench/density.h"

#include <algorithm>
#include <string>

#include "dsec/bench/stats.h"

namespace dsec::bench {

bool density_sample_at(size_t alive, size_t n) {
    for (size_t d = 1; d <= alive; d *= 10)
        if (alive == d || alive == 2 * d || alive == 5 * d) return true;
    return alive == n || (n >= 10 && alive % (n / 10) == 0);
}

nlohmann::json MemorySample::to_json() const {
    return {{"alive", alive}, {"memavailable", available}, {"committed", committed}, {"cgroup", cgroup},
            {"pss_init", pss}};
}

MemorySample memory_sample(size_t alive, const HostMemory& before, const HostMemory* now, double cgroup_sum,
                           double pss_sum, size_t inits) {
    MemorySample s;
    s.alive = alive;
    if (!alive) return s;
    double n = double(alive);
    if (now) {
        s.available = (double(before.available) - double(now->available)) / n;
        s.committed = (double(now->committed) - double(before.committed)) / n;
    }
    s.cgroup = inits ? cgroup_sum / double(inits) : 0;
    s.pss = inits ? pss_sum / double(inits) : 0;
    return s;
}

bool over_budget(const HostMemory& before, const HostMemory& now, uint64_t budget) {
    return budget && before.available > now.available && before.available - now.available >= budget;
}

nlohmann::json density_latency(const std::vector<double>& ms, size_t alive) {
    size_t k = std::min<size_t>(10, ms.size());
    std::vector<double> first(ms.begin(), ms.begin() + long(k)), last(ms.end() - long(k), ms.end());
    nlohmann::json out;
    out["figures"]["create_ms"] = summarize(ms).to_json("ms");
    out["figures"]["create_ms_first"] = summarize(first).to_json("ms");
    out["figures"]["create_ms_last"] = summarize(last).to_json("ms");
    out["figures"]["create_ms_first"]["alive"] = {0, k ? k - 1 : 0};
    out["figures"]["create_ms_last"]["alive"] = {alive - k, alive ? alive - 1 : 0};
    double m0 = median(first);
    out["ratios"]["last/first"] = {{"median", m0 > 0 ? median(last) / m0 : 0},
                                   {"means", "median create latency of the last " + std::to_string(k) +
                                                 " creates over that of the first " + std::to_string(k)}};
    return out;
}

}  // namespace dsec::bench
