// NAT for the sandboxes of one run directory: one nftables table of dsec's own (named
// like the run directory's cgroup parent: "dsec", or "dsec-" and 12 hex digits) with two
// rules that name no sandbox, so that a sandbox's create and destroy never touch it:
//
//   forward:     to any sandbox interface ("dsec-n*"), only replies (nothing opens a
//                connection into a sandbox, another sandbox included)
//   postrouting: from the address pools (IPv4 and IPv6) out of any other interface,
//                masquerade
//
// Made by the first egress sandbox of the run directory (under its network lock) and
// kept, like the egress programs, until dsec-reclaim gc finds no egress sandbox left.
#pragma once

#include <string>

#include "dsec/net/link.h"
#include "dsec/sys/error.h"
#include "dsec/sys/fs.h"

namespace dsec::net {

/// The table's name for `run_dir`.
std::string table_for(const std::string& run_dir);

/// Takes the run directory's network lock (`<run>/net.lock`). Errors: io.
Result<fs::Lock> lock_network(const std::string& run_dir);

/// Makes the table for sandboxes of `pool` unless it is there (asked over netlink: no
/// nft run when it is). Errors: helper_failed (nft), the netlink question's.
Status nat_ensure(const std::string& run_dir, const Pool& pool);

/// Deletes the whole table (when no sandbox of the run directory has egress any more:
/// the caller knows, from the pins). An absent table is fine. Errors: helper_failed.
Status nat_drop_table(const std::string& run_dir);

}  // namespace dsec::net
