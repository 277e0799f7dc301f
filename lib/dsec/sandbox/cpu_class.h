// CPU classes (`dsec-run create --class`): latency sandboxes run as any process does;
// batch ones run SCHED_IDLE (they get a CPU only when nothing else wants it) with the
// lowest CPU weight of their cgroup, so that they soak up idle cycles without slowing
// latency-class commands down. The class is recorded in the state ("class") and applied
// by the confinement step at every door (init, exec, cp).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "dsec/ns/confine.h"
#include "dsec/sys/error.h"

namespace dsec::sandbox {

/// The classes --class takes.
enum class CpuClass { latency, batch };

/// "latency" or "batch".
const char* cpu_class_name(CpuClass c);

/// Parses --class. Errors: usage for anything else.
Result<CpuClass> parse_cpu_class(const std::string& text);

/// The class a state records (latency when it records none).
CpuClass cpu_class_of(const nlohmann::json& state);

/// The cgroup CPU weight of a class on the v2 scale (1-10000, 100 the kernel's default);
/// 0 leaves the kernel's default.
uint64_t cpu_weight(CpuClass c);

/// Sets what the confinement step does for the class (SCHED_IDLE for batch; the
/// core-scheduling cookie for latency where the kernel has it, see core_sched.h).
void apply_cpu_class(CpuClass c, dsec_confinement& confinement);

}  // namespace dsec::sandbox
