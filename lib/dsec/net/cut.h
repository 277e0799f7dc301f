// Cutting a sandbox's connections that its rules no longer allow: the TCP and connected
// UDP sockets of its network namespace are listed through sock_diag and each one whose
// peer the rule table refuses is destroyed (SOCK_DESTROY, CONFIG_INET_DIAG_DESTROY): the
// process inside sees ECONNABORTED on its next call, the peer a reset.
#pragma once

#include "dsec/net/table.h"
#include "dsec/sys/error.h"

namespace dsec::net {

/// Destroys every connected TCP/UDP socket in the network namespace of `init_pid` whose
/// peer `table` does not allow; returns how many. Errors: not_running (no such
/// process), the failing setns/socket/netlink step, unsupported (a kernel without
/// SOCK_DESTROY: EOPNOTSUPP).
Result<int> cut_connections(int init_pid, const RuleTable& table);

}  // namespace dsec::net
