// Ids: the one check of a sandbox (or rootfs) id a user gives, and the one source of
// fresh random ids, for dsec-mount's rootfs, dsec-run's sandboxes and sessions alike.
#pragma once

#include <cstddef>
#include <string>

#include "dsec/sys/error.h"

namespace dsec {

/// A sandbox id: 1-64 of [A-Za-z0-9_.-], not starting with '.' or '-' (it names
/// directories and cgroups). Errors: bad_input, naming the rule broken.
Status check_id(const std::string& id);

/// `bytes` random bytes as lowercase hex (2 * bytes digits), from getrandom(2). With no
/// entropy source at all, time and pid mixed instead: ids differ between processes, and
/// a clash fails where the id is claimed (the mkdir of its directory), never silently.
std::string random_hex(size_t bytes);

/// Random bytes in a fresh sandbox id (12 hex digits) and in a fresh rootfs id (16).
constexpr size_t kSandboxIdBytes = 6;
constexpr size_t kRootfsIdBytes = 8;

}  // namespace dsec
