// The veth pair of a sandbox that may reach the network: `dsec-n<slot>` on the host,
// `eth0` inside, a /30 of the address pool per slot (host .1, sandbox .2).
//
// Slots are claimed by creating the host interface: its name is unique in the host's
// network namespace, so the kernel's own check is the lock between concurrent creates
// of every run directory, and a crash leaks nothing, since a veth goes with the sandbox's
// network namespace when its last process exits.
#pragma once

#include <cstdint>
#include <string>

#include "dsec/sys/error.h"

namespace dsec::net {

/// The addresses sandboxes take: DSEC_NET_POOL ("A.B.C.D/LEN", LEN 8-28), else
/// 100.64.0.0/10 (shared address space, never routed on the internet).
struct Pool {
    uint32_t first = 0x64400000;  // host order
    unsigned prefix = 10;
    uint32_t slots() const { return 1u << (30 - prefix); }
};

/// Errors: usage for a malformed DSEC_NET_POOL.
Result<Pool> pool_from_env();

/// One sandbox's link.
struct Link {
    uint32_t slot = 0;
    std::string host_if;       // "dsec-n<slot>"
    std::string host_addr;     // dotted, the sandbox's gateway
    std::string sandbox_addr;  // dotted, eth0 inside
};

/// The link of `slot` (names and addresses only).
Link link_for(const Pool& pool, uint32_t slot);

/// Claims a free slot and makes the pair (rtnetlink, netlink.h): the host end up with
/// its address and forwarding on, eth0 inside the network namespace of `init_pid` up
/// with its address and a default route through the host end. On error the pair is
/// removed. Errors: exhausted (every slot taken), the failing netlink request.
Result<Link> make_link(const Pool& pool, int init_pid);

/// Removes the host end (and so the pair); one already gone is fine. Errors: the
/// failing netlink request.
Status remove_link(const std::string& host_if);

/// True when the host has an interface of that name.
bool link_exists(const std::string& host_if);

}  // namespace dsec::net
