// Core scheduling for the latency class: what the sandbox record says for each kernel
// answer, and that only a latency sandbox on a host that has it asks for a cookie.
#include <doctest/doctest.h>

#include <cerrno>

#include "dsec/ns/confinement.h"
#include "dsec/sandbox/core_sched.h"

using namespace dsec;
using sandbox::CpuClass;

TEST_CASE("core_sched: the record says whether a latency sandbox has a cookie, and why not") {
    CHECK(sandbox::core_sched_record(CpuClass::latency, 0) == nlohmann::json{{"core_sched", true}});
    auto no_smt = sandbox::core_sched_record(CpuClass::latency, ENODEV);
    CHECK(no_smt["core_sched"] == false);
    CHECK(no_smt["core_sched_reason"].get<std::string>().find("no SMT") != std::string::npos);
    auto old = sandbox::core_sched_record(CpuClass::latency, EINVAL);
    CHECK(old["core_sched_reason"].get<std::string>().find("CONFIG_SCHED_CORE") != std::string::npos);
    auto other = sandbox::core_sched_record(CpuClass::latency, EPERM);
    CHECK(other["core_sched_reason"].get<std::string>().find("refused") != std::string::npos);
    // Batch sandboxes never get one, whatever the kernel has.
    CHECK(sandbox::core_sched_record(CpuClass::batch, 0)["core_sched"] == false);
}

TEST_CASE("core_sched: the confinement asks for a cookie only for latency, only where the kernel has it") {
    auto c = ns::make_confinement(-1, -1, 0, ns::Rlimits{}, "");
    REQUIRE(c);
    sandbox::apply_cpu_class(CpuClass::latency, **c);
    CHECK((*c)->core_sched == (sandbox::core_sched_errno() == 0 ? 1u : 0u));
    CHECK((*c)->sched_idle == 0);
    sandbox::apply_cpu_class(CpuClass::batch, **c);
    CHECK((*c)->core_sched == 0);
    CHECK((*c)->sched_idle == 1);
}
