// NAT for the sandboxes of one run directory: one nftables table of dsec's own (named
// like the run directory's cgroup parent: "dsec", or "dsec-" and 12 hex digits), with
// two sets, the sandboxes' host interfaces and addresses, and three rules:
//
//   forward:     to a sandbox's interface, only replies (nothing opens a connection
//                into a sandbox, another sandbox included)
//   postrouting: from a sandbox's address out of any other interface, masquerade
//
// Adding a sandbox rewrites the table in one transaction; removing the last one deletes
// the table. Both run under the run directory's network lock.
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

/// Adds the link's interface and address to the table, making the table if needed.
/// Errors: helper_failed (nft).
Status nat_add(const std::string& run_dir, const Link& link);

/// Takes them out again; absent elements or table are fine. Errors: helper_failed (nft).
Status nat_remove(const std::string& run_dir, const std::string& host_if, const std::string& sandbox_addr);

/// Deletes the whole table (when no sandbox of the run directory has egress any more:
/// the caller knows, from the pins). An absent table is fine. Errors: helper_failed.
Status nat_drop_table(const std::string& run_dir);

}  // namespace dsec::net
