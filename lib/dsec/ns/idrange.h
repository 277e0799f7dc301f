// Host id ranges for sandboxes' user namespaces: each sandbox maps root and the 65,535
// ids after it onto its own slice of a host pool, as podman's --userns=auto does. A
// slice is claimed by creating `$DSEC_RUN/userns/<slot>` (O_EXCL) under the pool's lock,
// holding the owning sandbox's id; destroy removes it; a slot whose owner has no state
// directory any more is stale and taken over by the next claim.
#pragma once

#include <cstdint>
#include <string>

#include "dsec/sys/error.h"

namespace dsec::ns {

/// Ids mapped per sandbox: root (0) to 65,535 inside.
constexpr uint32_t kIdsPerSandbox = 65536;

/// The host ids sandboxes may use: `slots` ranges of kIdsPerSandbox from `first`.
struct IdPool {
    uint32_t first = 1u << 30;  // 1,073,741,824: far above any account on the host
    uint32_t slots = 16384;     // up to 2^31: 16,384 sandboxes at once
};

/// The pool from DSEC_USERNS_POOL ("FIRST:SLOTS"), else the default.
/// Errors: usage for a malformed value or one past 2^32 - 1.
Result<IdPool> pool_from_env();

/// One claimed range.
struct IdRange {
    uint32_t slot = 0;
    uint32_t host_first = 0;  // host id of root inside
};

/// Claims a free range for sandbox `owner`. `alive(owner)` says whether a slot's
/// recorded owner still exists (stale slots are reused). Errors: exhausted when every
/// slot is held, io.
Result<IdRange> claim_ids(const std::string& run_dir, const IdPool& pool, const std::string& owner,
                          bool (*alive)(const std::string& run_dir, const std::string& owner));

/// Releases `slot` if `owner` holds it; a missing slot is fine. Errors: io.
Status release_ids(const std::string& run_dir, uint32_t slot, const std::string& owner);

}  // namespace dsec::ns
