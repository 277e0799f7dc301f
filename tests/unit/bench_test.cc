#include <doctest/doctest.h>

#include "dsec/bench/limits.h"
#include "dsec/bench/memory.h"
#include "dsec/bench/plot.h"
#include "dsec/bench/stats.h"

using namespace dsec::bench;

TEST_CASE("percentiles interpolate between the closest ranks") {
    std::vector<double> v{1, 2, 3, 4, 5};
    CHECK(percentile(v, 0) == 1);
    CHECK(percentile(v, 50) == 3);
    CHECK(percentile(v, 100) == 5);
    CHECK(percentile(v, 25) == doctest::Approx(2));
    CHECK(percentile(v, 90) == doctest::Approx(4.6));
    CHECK(percentile({}, 50) == 0);
    CHECK(percentile({7}, 99) == 7);
    CHECK(percentile({1, 2}, 50) == doctest::Approx(1.5));
}

TEST_CASE("a summary is ordered and sorts its input") {
    auto s = summarize({9, 1, 5, 3, 7, 2, 8, 4, 6, 10});
    CHECK(s.n == 10);
    CHECK(s.min == 1);
    CHECK(s.max == 10);
    CHECK(s.median == doctest::Approx(5.5));
    CHECK(s.mean == doctest::Approx(5.5));
    CHECK(s.min <= s.median);
    CHECK(s.median <= s.p90);
    CHECK(s.p90 <= s.p99);
    CHECK(s.p99 <= s.max);
    auto j = s.to_json("ms");
    CHECK(j["unit"] == "ms");
    CHECK(j["n"] == 10);
    CHECK(summarize({}).n == 0);
}

TEST_CASE("pair ratios skip zero denominators and stop at the shorter list") {
    auto r = pair_ratios({2, 4, 6, 8}, {1, 0, 3});
    REQUIRE(r.size() == 2);
    CHECK(r[0] == 2);
    CHECK(r[1] == 2);
    CHECK(median({3, 1, 2}) == 2);
}

TEST_CASE("meminfo values are bytes") {
    auto m = parse_meminfo("MemTotal:       24683548 kB\nMemAvailable:   100 kB\nHugePages_Total:       0\n");
    CHECK(m["MemTotal"] == 24683548ull * 1024);
    CHECK(m["MemAvailable"] == 102400);
    CHECK(m["HugePages_Total"] == 0);
    CHECK(m.count("Nope") == 0);
    // /proc/PID/io has the same "key: value" shape, without units.
    CHECK(parse_meminfo("rchar: 6976\nwchar: 12\n")["rchar"] == 6976);
}

TEST_CASE("the cpu model comes from x86 and arm cpuinfo") {
    CHECK(cpu_model_from_cpuinfo("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n") ==
          "AMD EPYC 7B13");
    CHECK(cpu_model_from_cpuinfo("Processor\t: ARMv7 Processor rev 4 (v7l)\n") == "ARMv7 Processor rev 4 (v7l)");
    CHECK(cpu_model_from_cpuinfo("flags: fpu\n").empty());
}

TEST_CASE("the cgroup layout is told from the mount table") {
    std::string v2 = "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n";
    std::string hybrid = "tmpfs /sys/fs/cgroup tmpfs rw 0 0\n"
                         "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
                         "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
    std::string v1 = "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n";
    CHECK(cgroup_mode_from_mounts(v2) == "v2");
    CHECK(cgroup_mode_from_mounts(hybrid) == "hybrid");
    CHECK(cgroup_mode_from_mounts(v1) == "v1");
    CHECK(cgroup_mode_from_mounts("proc /proc proc rw 0 0\n") == "none");
}

TEST_CASE("the state filesystem: its type, and an ext4 journal from its task file") {
    CHECK(ext4_journal_from_task("22762\n") == std::optional<bool>(true));
    CHECK(ext4_journal_from_task("<none>\n") == std::optional<bool>(false));
    CHECK_FALSE(ext4_journal_from_task("").has_value());
    CHECK_FALSE(ext4_journal_from_task("jbd2\n").has_value());
    auto f = state_fs("/proc");
    REQUIRE(f);
    CHECK(f->type == "0x9fa0");  // procfs: no name of ours, the magic in hex
    CHECK_FALSE(f->journal.has_value());
    CHECK(f->to_json() == json{{"path", "/proc"}, {"type", "0x9fa0"}});
    CHECK_FALSE(state_fs("/nonexistent/dsec"));
}

TEST_CASE("the memory cgroup of a process: v1 controller first, else v2") {
    CHECK(memory_cgroup_of("12:pids:/a\n5:memory:/dsec/box1\n0::/x\n") == "memory:/dsec/box1");
    CHECK(memory_cgroup_of("4:cpu,memory:/b\n") == "memory:/b");
    CHECK(memory_cgroup_of("0::/dsec/box2\n") == "v2:/dsec/box2");
    CHECK(memory_cgroup_of("1:name=systemd:/\n").empty());
}

TEST_CASE("the machine description has what the record promises") {
    auto m = read_machine();
    CHECK(m.cores >= 1);
    CHECK(m.memory_bytes > 0);
    CHECK(!m.kernel.empty());
    auto j = m.to_json();
    for (auto key : {"cores", "memory_bytes", "kernel", "cgroup_mode", "cpu_model"}) CHECK(j.contains(key));
}

TEST_CASE("limits for many sandboxes grow with the count and cover pid_max") {
    auto small = limits_for(10), big = limits_for(100000);
    REQUIRE(small.size() == big.size());
    for (size_t i = 0; i < small.size(); i++) CHECK(small[i].second <= big[i].second);
    CHECK(big[0].first == "kernel.pid_max");
    CHECK(big[0].second >= 400000);
    CHECK(read_limit("RLIMIT_NOFILE").value() > 0);
    CHECK(read_limit("kernel.pid_max").value() > 0);
    RaisedLimits none;
    CHECK(none.raise({{"RLIMIT_NOFILE", 1}}).has_value());  // already above: nothing changes
    CHECK(none.to_json().empty());
}

TEST_CASE("a CDF ends at 1 and the gnuplot script names every series") {
    auto c = cdf("x", {3, 1, 2, 4});
    REQUIRE(c.points.size() == 4);
    CHECK(c.points.front().first == 1);
    CHECK(c.points.back().second == 1);
    Panel p{"it's", "ms", "fraction", true, false, {c, cdf("y", {1})}};
    auto script = gnuplot_script({p, p}, "/tmp/d", "/tmp/o.svg");
    CHECK(script.find("set terminal svg") != std::string::npos);
    CHECK(script.find("'/tmp/d/1-1.dat'") != std::string::npos);
    CHECK(script.find("'it''s'") != std::string::npos);
    CHECK(script.find("layout 1,2") != std::string::npos);
}
