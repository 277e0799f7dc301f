// Core scheduling for latency-class sandboxes (prctl PR_SCHED_CORE): each such sandbox
// gets a cookie of its own, so that on an SMT host the sibling thread of a core running
// one of its tasks runs nothing of another sandbox. The kernel has it only with
// CONFIG_SCHED_CORE and answers ENODEV on a CPU without SMT: then nothing is done, the
// create goes on, and the sandbox record says why ("core_sched": false, "core_sched_reason").
#pragma once

#include <nlohmann/json.hpp>

#include "dsec/sandbox/cpu_class.h"

namespace dsec::sandbox {

/// What the kernel answered to PR_SCHED_CORE on this host: 0 when core scheduling works,
/// else the errno (ENODEV: no SMT; EINVAL: kernel without it). Asked once per process.
int core_sched_errno();

/// The sandbox record's {"core_sched": bool, "core_sched_reason": text (when false)} for a
/// sandbox of class `c` on a host whose kernel answered `err`. Pure.
nlohmann::json core_sched_record(CpuClass c, int err);

}  // namespace dsec::sandbox
