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
    return {{"alive", alive},
            {"memavailable", available},
            {"committed", committed},
            {"cgroup", cgroup},
            {"pss_init", pss},
            {"slab", slab},
            {"sunreclaim", sunreclaim},
            {"marginal_memavailable", marginal_available},
            {"marginal_slab", marginal_slab}};
}

MemorySample memory_sample(size_t alive, const HostMemory& before, const HostMemory* now, double cgroup_sum,
                           double pss_sum, size_t inits, const MemorySample* prev) {
    MemorySample s;
    s.alive = alive;
    if (!alive) return s;
    double n = double(alive);
    auto fall = [](uint64_t from, uint64_t to) { return double(from) - double(to); };
    if (now) {
        s.host = *now;
        s.available = fall(before.available, now->available) / n;
        s.committed = -fall(before.committed, now->committed) / n;
        s.slab = -fall(before.slab, now->slab) / n;
        s.sunreclaim = -fall(before.sunreclaim, now->sunreclaim) / n;
        // From the previous reading, when there is one and it was read.
        bool from_prev = prev && prev->host.available && prev->alive < alive;
        const HostMemory& from = from_prev ? prev->host : before;
        double added = double(alive - (from_prev ? prev->alive : 0));
        s.marginal_available = fall(from.available, now->available) / added;
        s.marginal_slab = -fall(from.slab, now->slab) / added;
    }
    s.cgroup = inits ? cgroup_sum / double(inits) : 0;
    s.pss = inits ? pss_sum / double(inits) : 0;
    return s;
}

bool over_budget(const HostMemory& before, const HostMemory& now, uint64_t budget) {
    return budget && before.available > now.available && before.available - now.available >= budget;
}

nlohmann::json density_latency(const std::vector<double>& ms, size_t alive) {
    nlohmann::json out;
    out["figures"]["create_ms"] = summarize(ms).to_json("ms");
    // The first and last k creates, k ten and then 1 % of them (ten samples each
    // side swing with whatever else the host did in those few milliseconds).
    auto ends = [&](size_t k, const std::string& suffix, const std::string& ratio) {
        k = std::min(k, ms.size());
        std::vector<double> first(ms.begin(), ms.begin() + long(k)), last(ms.end() - long(k), ms.end());
        out["figures"]["create_ms_first" + suffix] = summarize(first).to_json("ms");
        out["figures"]["create_ms_last" + suffix] = summarize(last).to_json("ms");
        out["figures"]["create_ms_first" + suffix]["alive"] = {0, k ? k - 1 : 0};
        out["figures"]["create_ms_last" + suffix]["alive"] = {alive - k, alive ? alive - 1 : 0};
        double m0 = median(first);
        out["ratios"][ratio] = {{"median", m0 > 0 ? median(last) / m0 : 0},
                                {"means", "median create latency of the last " + std::to_string(k) +
                                              " creates over that of the first " + std::to_string(k)}};
    };
    ends(10, "", "last/first");
    ends(std::max<size_t>(10, ms.size() / 100), "_1pct", "last/first 1%");
    return out;
}

std::vector<std::pair<double, double>> bucketed(const std::vector<std::pair<double, double>>& latency, size_t buckets,
                                                double pct) {
    std::vector<std::pair<double, double>> out;
    size_t width = std::max<size_t>(1, buckets ? (latency.size() + buckets - 1) / buckets : 1);
    for (size_t start = 0; start < latency.size(); start += width) {
        size_t end = std::min(latency.size(), start + width);
        double alive = 0;
        std::vector<double> ms;
        for (size_t i = start; i < end; i++) {
            alive += latency[i].first;
            ms.push_back(latency[i].second);
        }
        std::sort(ms.begin(), ms.end());
        out.push_back({alive / double(end - start), percentile(ms, pct)});
    }
    return out;
}

}  // namespace dsec::bench
