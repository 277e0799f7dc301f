// The egress programs (egress.bpf.c) of a run directory: loaded once and attached,
// through BPF links, to the run directory's cgroup parent on the unified tree, so that
// every sandbox cgroup beneath inherits them (the kernel runs a parent's programs for
// its descendants; attaching through links is BPF_F_ALLOW_MULTI, so nothing attached
// below can replace them, and nothing in a sandbox may attach or detach at all). Each
// sandbox with egress gets a slot of the shared rule array, registered under its cgroup
// id in the `slots` map (plain map updates: a map-in-map insertion would wait for an
// RCU grace period, milliseconds, at every create); `<run>/bpf/<id>/cgroup-<cgid>` (the
// slots map pinned again) records the key. The programs, their links and the shared
// maps are pinned at `<run>/bpf/-egress/`. The pins are what keep them: nothing runs in
// the background. DSEC_EGRESS_SLOTS (default 1024) bounds the egress sandboxes of a run
// directory; each slot is about 20 KiB, allocated when the programs load.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "dsec/net/table.h"
#include "dsec/sys/error.h"

namespace dsec::net {

/// `<run>/bpf`, where the bpffs holding the pins is mounted.
std::string bpffs_dir(const std::string& run_dir);
/// `<run>/bpf/<id>` (a dot in the id written as ':', since bpffs refuses dots): one
/// sandbox's pin.
std::string pin_dir(const std::string& run_dir, const std::string& id);
/// `<run>/bpf/-egress` (bpffs refuses names with a dot): the programs' links and the shared maps.
std::string shared_dir(const std::string& run_dir);

/// Mounts a bpffs at bpffs_dir() unless one is there. Call with the run directory's
/// network lock held (lock_network()). Errors: the failing mkdir, statfs or mount.
Status ensure_bpffs(const std::string& run_dir);

/// Gives the sandbox `id` (its cgroup `unified_cgroup`, whose parent directory is the
/// run directory's cgroup parent) a slot holding `table`, registered under its cgroup
/// id, after loading and attaching the programs to the parent if they are not
/// attached there yet (a pinned link whose cgroup is gone is replaced). Checks that the
/// programs are in force on the sandbox's cgroup before returning. Call with the
/// network lock held. On error nothing of the sandbox stays. Errors: bpf (load, attach,
/// pin, map updates) with libbpf's errno, exhausted (no free slot), io.
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

/// The denials counted so far for sandbox `id`. Errors: not_found (no pins), bpf.
Result<std::vector<Denial>> read_denials(const std::string& run_dir, const std::string& id);

/// The sandboxes with a pin under bpffs_dir() (its directories but the
/// shared one; the kernel's own files there, maps.debug and progs.debug, are not
/// sandboxes').
std::vector<std::string> pinned_ids(const std::string& run_dir);

/// Takes sandbox `id`'s slot back and unpins it: from then on its cgroup has no rules (and it has no route out: its veth goes first). Missing pins are
/// fine. Errors: bpf, io.
Status detach_egress(const std::string& run_dir, const std::string& id);

/// Unpins the programs' links and the shared maps, which detaches the programs (when
/// no sandbox has egress any more: the caller knows, from pinned_ids()). Missing pins
/// are fine. Errors: io.
Status drop_programs(const std::string& run_dir);

}  // namespace dsec::net
