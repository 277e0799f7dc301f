#include "dsec/sandbox/cpu_class.h"

#include "dsec/sandbox/core_sched.h"

namespace dsec::sandbox {

const char* cpu_class_name(CpuClass c) { return c == CpuClass::batch ? "batch" : "latency"; }

Result<CpuClass> parse_cpu_class(const std::string& text) {
    if (text == "latency") return CpuClass::latency;
    if (text == "batch") return CpuClass::batch;
    return fail(make_error(Code::usage, "--class must be latency or batch, got \"" + text + "\""));
}

CpuClass cpu_class_of(const nlohmann::json& state) {
    auto it = state.find("class");
    return it != state.end() && it->is_string() && *it == "batch" ? CpuClass::batch : CpuClass::latency;
}

uint64_t cpu_weight(CpuClass c) { return c == CpuClass::batch ? 1 : 0; }

void apply_cpu_class(CpuClass c, dsec_confinement& confinement) {
    confinement.sched_idle = c == CpuClass::batch;
    // Only where the kernel takes it: elsewhere the confinement step would ask in vain.
    confinement.core_sched = c == CpuClass::latency && core_sched_errno() == 0;
}

}  // namespace dsec::sandbox
