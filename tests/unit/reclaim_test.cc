// dsec-reclaim's decisions and parsers: what gc makes of a sandbox, when a TTL is due,
// flat CPU, memory.stat (v1 and v2), /proc/meminfo, PSI, /proc/swaps, and CPU classes.
#include <doctest/doctest.h>

#include "dsec/reclaim/gc.h"
#include "dsec/reclaim/memory.h"
#include "dsec/reclaim/pause.h"
#include "dsec/reclaim/swap.h"
#include "dsec/reclaim/ttl.h"
#include "dsec/sandbox/cpu_class.h"

using namespace dsec;
using nlohmann::json;

TEST_CASE("reclaim gc: a sandbox is judged by its state, its init and its age") {
    using reclaim::Verdict;
    using sandbox::Lifecycle;
    CHECK(reclaim::judge(Lifecycle::running, false, true, 5, 900) == Verdict::keep);
    CHECK(reclaim::judge(Lifecycle::running, false, false, 5, 900) == Verdict::dead_init);
    // Its lock was free: nobody creates or destroys it any more, however young.
    CHECK(reclaim::judge(Lifecycle::creating, false, false, 0, 900) == Verdict::half_created);
    CHECK(reclaim::judge(Lifecycle::destroying, false, true, 0, 900) == Verdict::half_destroyed);
    // No state file yet: a create between its mkdir and its first save, until the grace ends.
    CHECK(reclaim::judge(std::nullopt, false, false, 10, 900) == Verdict::young);
    CHECK(reclaim::judge(std::nullopt, false, false, 901, 900) == Verdict::half_created);
    CHECK(reclaim::judge(std::nullopt, true, false, 901, 900) == Verdict::broken);
    // A state the file should not hold (a listing's verdict) is broken once past its grace.
    CHECK(reclaim::judge(Lifecycle::dead, false, true, 901, 900) == Verdict::broken);
    CHECK(reclaim::judge(Lifecycle::dead, false, true, 10, 900) == Verdict::young);
    CHECK(std::string(reclaim::verdict_name(Verdict::dead_init)) == "dead_init");
}

TEST_CASE("reclaim ttl: --ttl counts from create, --idle-ttl from the last use") {
    using reclaim::Expiry;
    json s = {{"created_unix", 1000}, {"ttl", 60}, {"idle_ttl", nullptr}};
    CHECK(reclaim::due(s, 1059, 0, false) == Expiry::none);
    CHECK(reclaim::due(s, 1060, 0, false) == Expiry::ttl);
    CHECK(reclaim::due(s, 1060, 0, true) == Expiry::ttl);  // a running command does not extend a TTL
    json idle = {{"created_unix", 1000}, {"ttl", nullptr}, {"idle_ttl", 30.5}};
    CHECK(reclaim::due(idle, 1030, 0, false) == Expiry::none);
    CHECK(reclaim::due(idle, 1031, 0, false) == Expiry::idle_ttl);
    CHECK(reclaim::due(idle, 1031, 1020, false) == Expiry::none);  // used 11 s ago
    CHECK(reclaim::due(idle, 5000, 1020, true) == Expiry::none);   // a command runs now
    CHECK(reclaim::due(json{{"created_unix", 1000}}, 99999, 0, false) == Expiry::none);
    CHECK(reclaim::due(json{{"ttl", 1}}, 99999, 0, false) == Expiry::none);  // no creation time
    CHECK(reclaim::due(json{{"created_unix", 1000}, {"ttl", "soon"}}, 99999, 0, false) == Expiry::none);
}

TEST_CASE("reclaim idle: CPU use is flat below a share of one CPU") {
    CHECK(reclaim::cpu_flat(0, 500, 0.01));
    CHECK(reclaim::cpu_flat(4'999'999, 500, 0.01));
    CHECK_FALSE(reclaim::cpu_flat(5'000'000, 500, 0.01));
}

TEST_CASE("reclaim memory: memory.stat of v1 and v2, meminfo, PSI") {
    auto v1 = reclaim::parse_memory_stat("cache 1\nrss 2\ntotal_cache 4096\ntotal_rss 8192\ntotal_swap 12\n", true);
    CHECK(v1.page_cache == 4096);
    CHECK(v1.resident == 8192);
    CHECK(v1.swapped == 12);
    auto v2 = reclaim::parse_memory_stat("anon 100\nfile 200\nanon_thp 0\nfile_mapped 50\n", false);
    CHECK(v2.resident == 100);
    CHECK(v2.page_cache == 200);
    CHECK(reclaim::stat_value("MemTotal:       24576000 kB\nMemFree: 1 kB\n", "MemTotal") == 24576000);
    CHECK(reclaim::stat_value("MemTotal: 5 kB\n", "Mem") == 0);  // whole keys only
    auto psi = reclaim::parse_psi("some avg10=1.50 avg60=0.00 avg300=0.00 total=595759\n"
                                  "full avg10=0.00 avg60=0.00 avg300=0.00 total=183459\n");
    CHECK(psi["some"]["avg10"].get<double>() == doctest::Approx(1.5));
    CHECK(psi["full"]["total"] == 183459);
}

TEST_CASE("reclaim swap: /proc/swaps lists the device or not") {
    std::string swaps = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
                        "/dev/zram0                              partition\t4194300\t\t0\t\t100\n";
    CHECK(reclaim::swap_active(swaps, "/dev/zram0"));
    CHECK_FALSE(reclaim::swap_active(swaps, "/dev/zram1"));
    CHECK_FALSE(reclaim::swap_active("Filename Type Size Used Priority\n", "/dev/zram0"));
    // Turned on in a mount namespace that is gone: listed by its path from /dev's root.
    CHECK(reclaim::swap_active("Filename Type Size Used Priority\n/zram0   partition\t1048572\t516\t100\n", "/dev/zram0"));
    CHECK_FALSE(reclaim::swap_active("Filename Type Size Used Priority\n/zram10   partition\t1\t0\t1\n", "/dev/zram0"));
    CHECK_FALSE(reclaim::swap_active("Filename Type Size Used Priority\n/var/zram0   file\t1\t0\t1\n", "/dev/zram0"));
}

TEST_CASE("cpu class: parsed, recorded, applied") {
    CHECK(sandbox::parse_cpu_class("batch").value() == sandbox::CpuClass::batch);
    CHECK(sandbox::parse_cpu_class("latency").value() == sandbox::CpuClass::latency);
    CHECK(sandbox::parse_cpu_class("fast").error().code == Code::usage);
    CHECK(sandbox::cpu_class_of(json{{"class", "batch"}}) == sandbox::CpuClass::batch);
    CHECK(sandbox::cpu_class_of(json::object()) == sandbox::CpuClass::latency);  // states made before classes
    CHECK(sandbox::cpu_weight(sandbox::CpuClass::batch) == 1);
    CHECK(sandbox::cpu_weight(sandbox::CpuClass::latency) == 0);
    dsec_confinement c{};
    sandbox::apply_cpu_class(sandbox::CpuClass::batch, c);
    CHECK(c.sched_idle == 1);
    sandbox::apply_cpu_class(sandbox::CpuClass::latency, c);
    CHECK(c.sched_idle == 0);
}
