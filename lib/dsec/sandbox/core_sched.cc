#include "dsec/sandbox/core_sched.h"

#include <sys/prctl.h>

#include <cerrno>
#include <cstring>

#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE 62
#define PR_SCHED_CORE_GET 0
#endif

namespace dsec::sandbox {

int core_sched_errno() {
    static const int err = [] {
        // Reading this process's own cookie: refused exactly as a create would be.
        unsigned long cookie = 0;
        if (::prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, 0, 0 /* PIDTYPE_PID */, &cookie) == 0) return 0;
        return errno;
    }();
    return err;
}

nlohmann::json core_sched_record(CpuClass c, int err) {
    if (c != CpuClass::latency) return {{"core_sched", false}, {"core_sched_reason", "batch class"}};
    if (err == 0) return {{"core_sched", true}};
    std::string why = err == ENODEV ? "the CPU has no SMT (ENODEV): no sibling thread to keep others off"
                      : err == EINVAL ? "the kernel has no core scheduling (EINVAL: built without CONFIG_SCHED_CORE)"
                                      : std::string("PR_SCHED_CORE refused: ") + std::strerror(err);
    return {{"core_sched", false}, {"core_sched_reason", why}};
}

}  // namespace dsec::sandbox
