// Compressed swap in memory (zram) for hosts without swap: anonymous memory that idle
// sandboxes push out goes there, compressed, instead of staying in RAM as it is.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::reclaim {

/// The zram device used ("/dev/zram0") and its sysfs directory.
constexpr const char* kZramDevice = "/dev/zram0";
constexpr const char* kZramSys = "/sys/block/zram0";

/// Sets /dev/zram0 up as `bytes` of swap (mkswap, swapon at a high priority).
/// Errors: busy (the device is in use already), not_found (no zram), the failing step.
Status zram_on(uint64_t bytes);

/// Turns that swap off and resets the device (its memory goes back). Off already: fine.
/// Errors: the failing swapoff (not enough memory to take the pages back) or reset.
Status zram_off();

/// {"type":"swap","v":1,"device","active","disksize","stored","compressed","used"}, from
/// /proc/swaps and the device's mm_stat (bytes).
nlohmann::json zram_status();

/// Whether block device `device` ("/dev/zram0") is listed in /proc/swaps text, by its
/// name: a swap turned on in a mount namespace that has gone since is listed as
/// "/zram0" (the path from its /dev mount's root), so any "partition" entry whose last
/// component is the device's counts.
bool swap_active(const std::string& proc_swaps, const std::string& device);

}  // namespace dsec::reclaim
