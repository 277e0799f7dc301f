// The density benchmark's arithmetic (bench/density.h).
#include <doctest/doctest.h>

#include "dsec/bench/density.h"

using namespace dsec;

TEST_CASE("density: memory is sampled at 1-2-5 steps and every tenth of the count") {
    std::vector<size_t> at;
    for (size_t alive = 1; alive <= 100; alive++)
        if (bench::density_sample_at(alive, 100)) at.push_back(alive);
    CHECK(at == std::vector<size_t>{1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100});
    CHECK(bench::density_sample_at(7, 7));       // the last one always
    CHECK_FALSE(bench::density_sample_at(3, 7));  // n < 10: no tenths
}

TEST_CASE("density: memory per sandbox and the budget") {
    bench::HostMemory before{.available = 10000, .committed = 100}, now{.available = 6000, .committed = 2100};
    auto s = bench::memory_sample(4, before, &now, 800, 400, 2);
    CHECK(s.available == 1000);
    CHECK(s.committed == 500);
    CHECK(s.cgroup == 400);
    CHECK(s.pss == 200);
    CHECK(s.to_json()["pss_init"] == 200);
    auto unread = bench::memory_sample(4, before, nullptr, 0, 0, 0);
    CHECK(unread.available == 0);
    CHECK(unread.cgroup == 0);
    CHECK(bench::memory_sample(0, before, &now, 1, 1, 1).available == 0);
    CHECK(bench::over_budget(before, now, 4000));
    CHECK_FALSE(bench::over_budget(before, now, 4001));
    CHECK_FALSE(bench::over_budget(before, now, 0));
    CHECK_FALSE(bench::over_budget(now, before, 1));  // memory came back
}

TEST_CASE("density: slab growth per sandbox and the marginal cost between samples") {
    bench::HostMemory before{.available = 100000, .committed = 0, .slab = 1000, .sunreclaim = 500};
    bench::HostMemory at10{.available = 90000, .committed = 0, .slab = 6000, .sunreclaim = 2500};
    bench::HostMemory at20{.available = 70000, .committed = 0, .slab = 16000, .sunreclaim = 4500};
    auto first = bench::memory_sample(10, before, &at10, 0, 0, 0);
    CHECK(first.slab == 500);
    CHECK(first.sunreclaim == 200);
    // No sample before: the marginal cost is the average from the start.
    CHECK(first.marginal_available == 1000);
    CHECK(first.marginal_slab == 500);
    auto second = bench::memory_sample(20, before, &at20, 0, 0, 0, &first);
    CHECK(second.available == 1500);  // the average
    CHECK(second.marginal_available == 2000);  // the ten added since cost more
    CHECK(second.marginal_slab == 1000);
    CHECK(second.to_json()["marginal_slab"] == 1000);
    // An unread previous sample: measured from the start again.
    bench::MemorySample unread;
    unread.alive = 10;
    CHECK(bench::memory_sample(20, before, &at20, 0, 0, 0, &unread).marginal_available == 1500);
}

TEST_CASE("density: first and last ten creates, and their ratio") {
    std::vector<double> ms;
    for (int i = 0; i < 30; i++) ms.push_back(i < 10 ? 2.0 : i >= 20 ? 6.0 : 4.0);
    auto f = bench::density_latency(ms, 30);
    CHECK(f["figures"]["create_ms_first"]["median"] == 2.0);
    CHECK(f["figures"]["create_ms_last"]["median"] == 6.0);
    CHECK(f["figures"]["create_ms_last"]["alive"] == nlohmann::json{20, 29});
    CHECK(f["ratios"]["last/first"]["median"] == 3.0);
    // Under 1,000 creates, the 1 % ends are the ten.
    CHECK(f["ratios"]["last/first 1%"]["median"] == 3.0);
    auto none = bench::density_latency({}, 0);
    CHECK(none["ratios"]["last/first"]["median"] == 0);
    CHECK(none["ratios"]["last/first 1%"]["median"] == 0);
}

TEST_CASE("density: the first and last 1 % of many creates, steadier than ten") {
    std::vector<double> ms;
    // 3,000 creates: 2 ms, then 4, then 6 ms, but one slow (20 ms) in every ten.
    for (int i = 0; i < 3000; i++) ms.push_back(i % 10 == 0 ? 20.0 : i < 1000 ? 2.0 : i >= 2000 ? 6.0 : 4.0);
    auto f = bench::density_latency(ms, 3000);
    CHECK(f["figures"]["create_ms_first_1pct"]["n"] == 30);
    CHECK(f["figures"]["create_ms_last_1pct"]["alive"] == nlohmann::json{2970, 2999});
    CHECK(f["ratios"]["last/first 1%"]["median"] == 3.0);
}

TEST_CASE("density: latencies of many creates become a few points for the plot") {
    std::vector<std::pair<double, double>> lat;
    for (int i = 0; i < 1000; i++) lat.push_back({double(i), i % 10 == 9 ? 100.0 : 5.0});  // one slow in ten
    auto med = bench::bucketed(lat, 100, 50);
    REQUIRE(med.size() == 100);
    CHECK(med.front().first == doctest::Approx(4.5));  // creates 0..9
    CHECK(med.front().second == doctest::Approx(5.0));
    auto p95 = bench::bucketed(lat, 100, 95);
    CHECK(p95.back().second > 50);
    // Fewer creates than buckets: one point each; none: none.
    CHECK(bench::bucketed({{1, 2}, {2, 3}}, 100, 50).size() == 2);
    CHECK(bench::bucketed({}, 100, 50).empty());
    // A count that does not divide: every create is in one run.
    CHECK(bench::bucketed(std::vector<std::pair<double, double>>(1001, {1, 1}), 100, 50).size() == 91);
}
