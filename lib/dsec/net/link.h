// The veth pair of a sandbox that may reach the network: `dsec-n<slot>` on the host,
// `eth0` inside, a /30 of the address pool per slot (host .1, sandbox .2), and, when the
// host forwards IPv6 (net.ipv6.conf.all.forwarding = 1: the operator's choice, since it
// is host-wide and stops the host taking router advertisements), a /126 of the IPv6
// pool likewise (host ::…1, sandbox ::…2).
//
// Slots are claimed by creating the host interface: its name is unique in the host's
// network namespace, so the kernel's own check is the lock between concurrent creates
// of every run directory, and a crash leaks nothing, since a veth goes with the sandbox's
// network namespace when its last process exits.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>

#include "dsec/sys/error.h"

namespace dsec::net {

/// The addresses sandboxes take: DSEC_NET_POOL ("A.B.C.D/LEN", LEN 8-28), else
/// 100.64.0.0/10 (shared address space, never routed on the internet); and for IPv6,
/// DSEC_NET_POOL6 (a /64, "PREFIX::/64"), else fdd5:ec00:0:1::/64 (unique local), in
/// which slot N has ::(4N+1) and ::(4N+2).
struct Pool {
    uint32_t first = 0x64400000;  // host order
    unsigned prefix = 10;
    in6_addr first6 = {{{0xfd, 0xd5, 0xec, 0x00, 0, 0, 0, 1}}};
    uint32_t slots() const { return 1u << (30 - prefix); }
};

/// Errors: usage for a malformed DSEC_NET_POOL or DSEC_NET_POOL6.
Result<Pool> pool_from_env();

/// Whether the host forwards IPv6 (net.ipv6.conf.all.forwarding is 1), so that
/// sandboxes get IPv6 addresses and a route.
bool host_forwards_ipv6();

/// The pool's IPv6 network, as text ("fdd5:ec00:0:1::/64").
std::string pool6_text(const Pool& pool);

/// One sandbox's link.
struct Link {
    uint32_t slot = 0;
    std::string host_if;       // "dsec-n<slot>"
    std::string host_addr;     // dotted, the sandbox's gateway
    std::string sandbox_addr;  // dotted, eth0 inside
    std::string host_addr6;     // IPv6, the sandbox's gateway; empty without IPv6
    std::string sandbox_addr6;  // IPv6 of eth0 inside; empty without IPv6
};

/// The link of `slot` (names and addresses only; IPv6 ones when `ipv6`).
Link link_for(const Pool& pool, uint32_t slot, bool ipv6 = false);

/// Claims a free slot and makes the pair (rtnetlink, netlink.h): the host end up with
/// its address and forwarding on, eth0 inside the network namespace of `init_pid` up
/// with its address and a default route through the host end; with IPv6 addresses and
/// an IPv6 default route too when host_forwards_ipv6(). On error the pair is removed.
/// Errors: exhausted (every slot taken), the failing netlink request.
Result<Link> make_link(const Pool& pool, int init_pid);

/// Removes the host end (and so the pair); one already gone is fine. Errors: the
/// failing netlink request.
Status remove_link(const std::string& host_if);

/// True when the host has an interface of that name.
bool link_exists(const std::string& host_if);

}  // namespace dsec::net
