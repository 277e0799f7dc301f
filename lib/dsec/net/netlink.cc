#include "dsec/net/netlink.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace dsec::net {

namespace {
// A request being built: the header, the family's fixed struct, then attributes, each
// padded to 4 bytes; nested attributes are closed by writing their length at the end.
struct Msg {
    std::string buf;

    template <typename T>
    void put(const T& v) {
        buf.append(reinterpret_cast<const char*>(&v), sizeof v);
        buf.resize(NLMSG_ALIGN(buf.size()), '\0');
    }
    void attr(uint16_t type, const void* data, size_t len) {
        struct nlattr a = {uint16_t(NLA_HDRLEN + len), type};
        buf.append(reinterpret_cast<const char*>(&a), NLA_HDRLEN);
        if (len) buf.append(static_cast<const char*>(data), len);
        buf.resize(NLA_ALIGN(buf.size()), '\0');
    }
    void attr(uint16_t type, const std::string& s) { attr(type, s.c_str(), s.size() + 1); }
    void attr32(uint16_t type, uint32_t v) { attr(type, &v, sizeof v); }
    size_t nest(uint16_t type) {
        size_t at = buf.size();
        attr(type, nullptr, 0);
        return at;
    }
    void end(size_t at) {
        uint16_t len = uint16_t(buf.size() - at);
        std::memcpy(buf.data() + at, &len, sizeof len);
    }
};

Msg request(uint16_t type, uint16_t flags);

// A new default route of `family` in the main table, gateway and link still to add.
Msg default_route(unsigned char family) {
    Msg m = request(RTM_NEWROUTE, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
    rtmsg r = {};
    r.rtm_family = family;
    r.rtm_table = RT_TABLE_MAIN;
    r.rtm_protocol = RTPROT_BOOT;
    r.rtm_scope = RT_SCOPE_UNIVERSE;
    r.rtm_type = RTN_UNICAST;
    m.put(r);
    return m;
}

Msg request(uint16_t type, uint16_t flags) {
    Msg m;
    struct nlmsghdr h = {};
    h.nlmsg_type = type;
    h.nlmsg_flags = uint16_t(NLM_F_REQUEST | flags);
    m.put(h);
    return m;
}

Error netlink_error(int err, const char* op, const std::string& what) {
    Error e = errno_error(err, op, what);
    if (err == EEXIST) e.code = Code::exists;
    if (err == ENODEV) e.code = Code::not_found;
    return e;
}
}  // namespace

Result<Rtnl> Rtnl::open_protocol(int protocol) {
    Fd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol));
    if (!fd) return fail(sys_error("socket", "AF_NETLINK"));
    struct sockaddr_nl sa = {};
    sa.nl_family = AF_NETLINK;
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) return fail(sys_error("bind", "AF_NETLINK"));
    return Rtnl(std::move(fd));
}

Result<Rtnl> Rtnl::open() { return open_protocol(NETLINK_ROUTE); }

Result<bool> Rtnl::nft_table_exists(const std::string& name) {
    auto nl = open_protocol(NETLINK_NETFILTER);
    if (!nl) return fail(nl.error());
    Msg m = request(uint16_t((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETTABLE), NLM_F_ACK);
    nfgenmsg g = {};
    g.nfgen_family = NFPROTO_INET;
    g.version = NFNETLINK_V0;
    m.put(g);
    m.attr(NFTA_TABLE_NAME, name);
    std::string reply;
    auto r = nl->talk(m.buf, "NFT_MSG_GETTABLE", name, &reply);
    if (!r && r.error().err == ENOENT) return false;
    if (!r) return fail(r.error());
    return true;
}

Result<Rtnl> Rtnl::open_in(int netns_fd) {
    Fd home(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!home) return fail(sys_error("open", "/proc/thread-self/ns/net"));
    // Only this thread moves (a network namespace is per thread), and only for the
    // socket call: the socket stays in the namespace it was made in.
    if (::setns(netns_fd, CLONE_NEWNET) < 0) return fail(sys_error("setns", "the sandbox's network namespace"));
    auto r = open();
    if (::setns(home.get(), CLONE_NEWNET) < 0) return fail(sys_error("setns", "back to the host's network namespace"));
    return r;
}

Status Rtnl::talk(std::string& msg, const char* op, const std::string& what, std::string* reply) {
    auto* h = reinterpret_cast<nlmsghdr*>(msg.data());
    h->nlmsg_len = uint32_t(msg.size());
    h->nlmsg_seq = ++seq_;
    if (::send(fd_.get(), msg.data(), msg.size(), 0) != ssize_t(msg.size())) return fail(sys_error("send", what));
    alignas(nlmsghdr) char buf[16384];
    for (;;) {
        ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(sys_error("recv", what));
        }
        for (auto* r = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(r, unsigned(n)); r = NLMSG_NEXT(r, n)) {
            if (r->nlmsg_seq != seq_) continue;
            if (r->nlmsg_type == NLMSG_ERROR) {
                auto* e = static_cast<nlmsgerr*>(NLMSG_DATA(r));
                if (e->error) return fail(netlink_error(-e->error, op, what));
                return {};
            }
            if (reply) {
                reply->assign(reinterpret_cast<char*>(r), r->nlmsg_len);
                return {};
            }
        }
    }
}

Status Rtnl::add_veth(const std::string& name, const std::string& peer, int peer_netns_fd) {
    Msg m = request(RTM_NEWLINK, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
    m.put(ifinfomsg{});
    m.attr(IFLA_IFNAME, name);
    // One queue each way, from the start: a veth made with one per CPU is cut down to one
    // after it is registered, and each cut waits for an expedited RCU grace period
    // (netif_set_real_num_tx_queues -> synchronize_net) under the rtnl lock.
    m.attr32(IFLA_NUM_TX_QUEUES, 1);
    m.attr32(IFLA_NUM_RX_QUEUES, 1);
    size_t info = m.nest(IFLA_LINKINFO);
    m.attr(IFLA_INFO_KIND, std::string("veth"));
    size_t data = m.nest(IFLA_INFO_DATA);
    size_t p = m.nest(VETH_INFO_PEER);
    m.put(ifinfomsg{});
    m.attr(IFLA_IFNAME, peer);
    m.attr32(IFLA_NET_NS_FD, uint32_t(peer_netns_fd));
    m.attr32(IFLA_NUM_TX_QUEUES, 1);
    m.attr32(IFLA_NUM_RX_QUEUES, 1);
    m.end(p);
    m.end(data);
    m.end(info);
    return talk(m.buf, "RTM_NEWLINK veth", name);
}

Result<int> Rtnl::link_index(const std::string& name) {
    Msg m = request(RTM_GETLINK, 0);
    m.put(ifinfomsg{});
    m.attr(IFLA_IFNAME, name);
    std::string reply;
    if (auto r = talk(m.buf, "RTM_GETLINK", name, &reply); !r) return fail(r.error());
    if (reply.size() < NLMSG_LENGTH(sizeof(ifinfomsg))) return fail(make_error(Code::io, "short RTM_GETLINK reply", name));
    ifinfomsg info;
    std::memcpy(&info, reply.data() + NLMSG_HDRLEN, sizeof info);
    return info.ifi_index;
}

Status Rtnl::add_address4(int index, uint32_t addr, unsigned prefix) {
    Msg m = request(RTM_NEWADDR, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
    ifaddrmsg a = {};
    a.ifa_family = AF_INET;
    a.ifa_prefixlen = uint8_t(prefix);
    a.ifa_scope = RT_SCOPE_UNIVERSE;
    a.ifa_index = uint32_t(index);
    m.put(a);
    uint32_t be = htonl(addr);
    m.attr32(IFA_LOCAL, be);
    m.attr32(IFA_ADDRESS, be);
    return talk(m.buf, "RTM_NEWADDR", "link " + std::to_string(index));
}

Status Rtnl::add_address6(int index, const in6_addr& addr, unsigned prefix) {
    Msg m = request(RTM_NEWADDR, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
    ifaddrmsg a = {};
    a.ifa_family = AF_INET6;
    a.ifa_prefixlen = uint8_t(prefix);
    a.ifa_flags = IFA_F_NODAD;
    a.ifa_scope = RT_SCOPE_UNIVERSE;
    a.ifa_index = uint32_t(index);
    m.put(a);
    m.attr(IFA_LOCAL, &addr, sizeof addr);
    m.attr(IFA_ADDRESS, &addr, sizeof addr);
    m.attr32(IFA_FLAGS, IFA_F_NODAD);
    return talk(m.buf, "RTM_NEWADDR", "link " + std::to_string(index));
}

Status Rtnl::set_up(int index) {
    Msg m = request(RTM_NEWLINK, NLM_F_ACK);
    ifinfomsg i = {};
    i.ifi_index = index;
    i.ifi_flags = IFF_UP;
    i.ifi_change = IFF_UP;
    m.put(i);
    return talk(m.buf, "RTM_NEWLINK up", "link " + std::to_string(index));
}

Status Rtnl::add_default_route4(int index, uint32_t gateway) {
    Msg m = default_route(AF_INET);
    m.attr32(RTA_GATEWAY, htonl(gateway));
    m.attr32(RTA_OIF, uint32_t(index));
    return talk(m.buf, "RTM_NEWROUTE", "default via link " + std::to_string(index));
}

Status Rtnl::add_default_route6(int index, const in6_addr& gateway) {
    Msg m = default_route(AF_INET6);
    m.attr(RTA_GATEWAY, &gateway, sizeof gateway);
    m.attr32(RTA_OIF, uint32_t(index));
    return talk(m.buf, "RTM_NEWROUTE", "IPv6 default via link " + std::to_string(index));
}

Status Rtnl::delete_link(const std::string& name) {
    Msg m = request(RTM_DELLINK, NLM_F_ACK);
    m.put(ifinfomsg{});
    m.attr(IFLA_IFNAME, name);
    return talk(m.buf, "RTM_DELLINK", name);
}

}  // namespace dsec::net
