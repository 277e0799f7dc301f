// The few netlink requests a sandbox's network needs, made on raw sockets rather than by
// running ip(8) or nft(8) (each run costs a fork and an exec, tens of milliseconds on a
// busy host): a veth pair with its peer created in another network namespace, IPv4 and
// IPv6 addresses, links up, default routes, a link deleted; whether an nftables table
// is there.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::net {

/// One rtnetlink socket, bound to the network namespace it was opened in: requests made
/// on it act there, whichever namespace the caller is in by then.
class Rtnl {
public:
    /// A socket in our own network namespace. Errors: socket, bind.
    static Result<Rtnl> open();
    /// A socket in the network namespace `netns_fd` refers to: this thread enters it,
    /// opens the socket and comes back. Errors: setns, socket.
    static Result<Rtnl> open_in(int netns_fd);
    /// Whether our network namespace has the nftables table `name` of family inet (asked
    /// on a NETLINK_NETFILTER socket). Errors: socket, the kernel's errno but ENOENT.
    static Result<bool> nft_table_exists(const std::string& name);

    /// A veth pair: `name` here, `peer` in the network namespace `peer_netns_fd`.
    /// Errors: the kernel's errno (EEXIST when `name` is taken), as code "exists" for it.
    Status add_veth(const std::string& name, const std::string& peer, int peer_netns_fd);
    /// The index of the link `name`. Errors: ENODEV (code not_found).
    Result<int> link_index(const std::string& name);
    /// Adds `addr`/`prefix` (host order) to link `index`.
    Status add_address4(int index, uint32_t addr, unsigned prefix);
    /// Adds the IPv6 `addr`/`prefix` to link `index`, without duplicate address detection
    /// (the addresses are dsec's own on a link of two ends: waiting for DAD would only
    /// hold the address back for a second or so).
    Status add_address6(int index, const in6_addr& addr, unsigned prefix);
    /// Brings link `index` up.
    Status set_up(int index);
    /// A default route through `gateway` (host order) on link `index`.
    Status add_default_route4(int index, uint32_t gateway);
    /// An IPv6 default route through `gateway` on link `index`.
    Status add_default_route6(int index, const in6_addr& gateway);
    /// Deletes the link `name`. Errors: ENODEV (code not_found) when there is none.
    Status delete_link(const std::string& name);

private:
    explicit Rtnl(Fd fd) : fd_(std::move(fd)) {}
    static Result<Rtnl> open_protocol(int protocol);
    // Sends one request and reads its answer: the ack's errno, or (for a get) the
    // reply's first message copied to `reply`.
    Status talk(std::string& msg, const char* op, const std::string& what, std::string* reply = nullptr);
    Fd fd_;
    uint32_t seq_ = 0;
};

}  // namespace dsec::net
