// Kernel samepage merging: sandbox processes are made eligible by the confinement step
// (PR_SET_MEMORY_MERGE, see ns/confine.h); ksmd only scans while it runs.
#pragma once

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::reclaim {

/// Starts (`on`) or stops ksmd: /sys/kernel/mm/ksm/run 1 or 0 (0 keeps merged pages
/// merged). Errors: unsupported without KSM, the failing write.
Status ksm_run(bool on);

/// {"type":"ksm","v":1,"running","pages_shared","pages_sharing","pages_unshared",
/// "full_scans","saved"}: saved is the bytes merging saves (pages_sharing pages, or
/// general_profit where the kernel reports it).
nlohmann::json ksm_status();

}  // namespace dsec::reclaim
