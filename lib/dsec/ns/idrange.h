// Host id ranges for sandboxes' user namespaces: each sandbox maps root and the 65,535
// ids after it onto its own slice of a host pool, as podman's --userns=auto does. A
// slice is claimed by creating `$DSEC_RUN/userns/<slot>` (O_EXCL) under the pool's lock,
// holding the owning sandbox's id; destroy removes it; a slot whose owner has no state
// directory any more is stale and taken over by the next claim.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

/// A user namespace's id map (the lines of /proc/PID/uid_map): `count` ids from
/// `inside` are the host's from `outside`.
struct IdMap {
    struct Line {
        uint32_t inside = 0, outside = 0, count = 0;
    };
    std::vector<Line> lines;

    /// The text written to uid_map and gid_map: all lines, in one write.
    std::string text() const;
    /// The id inside that host id `host` is, if it is mapped.
    std::optional<uint32_t> inside(uint32_t host) const;
    /// The host id of `id` inside, if it is mapped.
    std::optional<uint32_t> outside(uint32_t id) const;
};

/// The map of a sandbox whose range starts at host id `first` (count > 128): 0..count-1
/// inside onto first..first+count-1, with root at first + R, R = 1 + (first / 65536)
/// mod 127, in three lines: 0.. onto first+R.., then count-128.. onto the R ids skipped
/// at the start, then the rest in order. The kernel keeps one user struct per host uid in
/// a table of 128 buckets hashed by `((uid >> 7) + uid) & 127`; with root at a multiple
/// of 65536, every sandbox's root hashed to bucket 0, and each setuid to it walked a
/// chain as long as the number of sandboxes alive. Ids inside still map in increasing
/// order from count-128 to count-1 onto first to first+count-1 at both ends, so a range
/// of group ids the kernel compares by host id (ping_group_range) can cover them all.
IdMap sandbox_id_map(uint32_t first, uint32_t count);

/// The uid map ("uid_map") or gid map ("gid_map") of process `pid`. Errors: io, and
/// corrupt for a line that does not parse.
Result<IdMap> read_id_map(int pid, const char* file);

/// Claims a free range for sandbox `owner`. `alive(owner)` says whether a slot's
/// recorded owner still exists (stale slots are reused). Errors: exhausted when every
/// slot is held, io.
Result<IdRange> claim_ids(const std::string& run_dir, const IdPool& pool, const std::string& owner,
                          bool (*alive)(const std::string& run_dir, const std::string& owner));

/// Releases `slot` if `owner` holds it; a missing slot is fine. Errors: io.
Status release_ids(const std::string& run_dir, uint32_t slot, const std::string& owner);

}  // namespace dsec::ns
