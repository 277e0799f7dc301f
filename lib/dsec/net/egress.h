// A sandbox's egress programs (egress.bpf.c): loaded once per sandbox, attached to its
// unified-tree cgroup through BPF links, with the links and maps pinned in a bpffs at
// `<run>/bpf/<id>/`. The pins are what keep them: nothing runs in the background, and
// later commands (dsec-guard net, events) open the maps from there.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "dsec/net/table.h"
#include "dsec/sys/error.h"

namespace dsec::net {

/// `<run>/bpf`, where the bpffs holding every sandbox's pins is mounted.
std::string bpffs_dir(const std::string& run_dir);
/// `<run>/bpf/<id>`.
std::string pin_dir(const std::string& run_dir, const std::string& id);

/// Mounts a bpffs at bpffs_dir() unless one is there. Call with the run directory's
/// network lock held (lock_network()). Errors: the failing mkdir, statfs or mount.
Status ensure_bpffs(const std::string& run_dir);

/// Loads the programs, fills their rule table with `table`, attaches them to the cgroup
/// directory `unified_cgroup` and pins links and maps under pin_dir(). On error nothing
/// stays pinned or attached. Errors: bpf (load, attach, pin) with libbpf's errno.
Status attach_egress(const std::string& run_dir, const std::string& id, const std::string& unified_cgroup,
                     const RuleTable& table);

/// Replaces the rule table of a running sandbox: the new rules go into the table not in
/// use, then one word switches to it. Errors: not_found (no pins), bpf.
Status update_egress(const std::string& run_dir, const std::string& id, const RuleTable& table);

/// One counted denial (egress_abi.h's key) and how often it happened.
struct Denial {
    int family = 0;  // 4, 6, or 0 (a socket of another family)
    std::array<uint8_t, 16> addr{};
    uint16_t port = 0;
    uint8_t proto = 0;
    uint8_t kind = 0;  // 1 connect, 2 send, 3 socket
    uint64_t count = 0;
};

/// The denials counted so far. Errors: not_found (no pins), bpf.
Result<std::vector<Denial>> read_denials(const std::string& run_dir, const std::string& id);

/// The sandboxes with pins under bpffs_dir() (its directories: the kernel's own files
/// there, maps.debug and progs.debug, are not sandboxes').
std::vector<std::string> pinned_ids(const std::string& run_dir);

/// Unpins everything under pin_dir(), which detaches the programs (the cgroup's removal
/// detaches them too). Missing pins are fine. Errors: io.
Status detach_egress(const std::string& run_dir, const std::string& id);

}  // namespace dsec::net
