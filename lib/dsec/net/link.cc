#include "dsec/net/link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "dsec/net/netlink.h"
#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"

namespace dsec::net {

namespace {
std::string dotted(uint32_t host_order) {
    in_addr a{htonl(host_order)};
    char text[INET_ADDRSTRLEN] = "";
    ::inet_ntop(AF_INET, &a, text, sizeof text);
    return text;
}

// Address `host_low` (the last 32 bits) in the pool's IPv6 /64.
in6_addr address6(const Pool& pool, uint32_t host_low) {
    in6_addr a = pool.first6;
    uint32_t be = htonl(host_low);
    std::memcpy(&a.s6_addr[12], &be, sizeof be);
    return a;
}

std::string text6(const in6_addr& a) {
    char text[INET6_ADDRSTRLEN] = "";
    ::inet_ntop(AF_INET6, &a, text, sizeof text);
    return text;
}

// The IPv6 half of configure(): addresses on both ends (links already up) and the
// sandbox's default route.
Status configure6(Rtnl& host, Rtnl& inside, int host_index, int eth0, const Pool& pool, uint32_t slot) {
    in6_addr gateway = address6(pool, slot * 4 + 1);
    if (auto r = host.add_address6(host_index, gateway, 126); !r) return r;
    if (auto r = inside.add_address6(eth0, address6(pool, slot * 4 + 2), 126); !r) return r;
    return inside.add_default_route6(eth0, gateway);
}

// The host end up with its address and forwarding on, eth0 inside (through `inside`)
// up with its address and a default route through the host end.
Status configure(Rtnl& host, Rtnl& inside, const Link& l, const Pool& pool, uint32_t base) {
    auto index = host.link_index(l.host_if);
    if (!index) return fail(index.error());
    if (auto r = host.add_address4(*index, base + 1, 30); !r) return r;
    if (auto r = host.set_up(*index); !r) return r;
    // A sandbox's packets are forwarded only from its own interface; the host-wide
    // switch is left as it is.
    std::string fwd = "/proc/sys/net/ipv4/conf/" + l.host_if + "/forwarding";
    Fd f(::open(fwd.c_str(), O_WRONLY | O_CLOEXEC));
    if (!f || ::write(f.get(), "1", 1) != 1) return fail(sys_error("write", fwd));
    auto eth0 = inside.link_index("eth0");
    if (!eth0) return fail(eth0.error());
    if (auto r = inside.add_address4(*eth0, base + 2, 30); !r) return r;
    if (auto r = inside.set_up(*eth0); !r) return r;
    if (auto r = inside.add_default_route4(*eth0, base + 1); !r) return r;
    if (l.sandbox_addr6.empty()) return {};
    return configure6(host, inside, *index, *eth0, pool, l.slot);
}

// DSEC_NET_POOL6 into `pool`: a /64 ("PREFIX::/64", no host bits).
Status pool6_from_env(Pool& pool) {
    const char* env = std::getenv("DSEC_NET_POOL6");
    if (!env || !*env) return {};
    std::string text = env;
    in6_addr a{};
    auto slash = text.find('/');
    static const uint8_t zero[8] = {};
    if (slash == std::string::npos || text.substr(slash) != "/64" ||
        ::inet_pton(AF_INET6, text.substr(0, slash).c_str(), &a) != 1 || std::memcmp(&a.s6_addr[8], zero, 8) != 0)
        return fail(make_error(Code::usage, "DSEC_NET_POOL6 must be an IPv6 network PREFIX::/64 with no host bits, got \"" +
                                            text + "\""));
    pool.first6 = a;
    return {};
}
}  // namespace

Result<Pool> pool_from_env() {
    Pool pool;
    if (auto r = pool6_from_env(pool); !r) return fail(r.error());
    const char* env = std::getenv("DSEC_NET_POOL");
    if (!env || !*env) return pool;
    std::string text = env;
    auto slash = text.find('/');
    in_addr a{};
    char* end = nullptr;
    unsigned long prefix = slash == std::string::npos ? 0 : std::strtoul(text.c_str() + slash + 1, &end, 10);
    if (slash == std::string::npos || ::inet_pton(AF_INET, text.substr(0, slash).c_str(), &a) != 1 || !end || *end ||
        prefix < 8 || prefix > 28 || (ntohl(a.s_addr) & ((1u << (32 - prefix)) - 1)) != 0)
        return fail(make_error(Code::usage, "DSEC_NET_POOL must be an IPv4 network A.B.C.D/LEN with LEN 8-28 and no host "
                                        "bits, got \"" + text + "\""));
    pool.first = ntohl(a.s_addr);
    pool.prefix = unsigned(prefix);
    return pool;
}

std::string pool6_text(const Pool& pool) { return text6(pool.first6) + "/64"; }

bool host_forwards_ipv6() {
    auto text = fs::read_file("/proc/sys/net/ipv6/conf/all/forwarding");
    return text && text->starts_with("1");
}

Link link_for(const Pool& pool, uint32_t slot, bool ipv6) {
    uint32_t base = pool.first + slot * 4;
    Link l{slot, "dsec-n" + std::to_string(slot), dotted(base + 1), dotted(base + 2), "", ""};
    if (ipv6) {
        l.host_addr6 = text6(address6(pool, slot * 4 + 1));
        l.sandbox_addr6 = text6(address6(pool, slot * 4 + 2));
    }
    return l;
}

bool link_exists(const std::string& host_if) { return ::if_nametoindex(host_if.c_str()) != 0; }

Result<Link> make_link(const Pool& pool, int init_pid) {
    bool ipv6 = host_forwards_ipv6();
    uint32_t start = 0;
    if (::getrandom(&start, sizeof start, 0) != sizeof start) start = uint32_t(::getpid());
    std::string ns_path = "/proc/" + std::to_string(init_pid) + "/ns/net";
    Fd netns(::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!netns) return fail(sys_error("open", ns_path));
    auto host = Rtnl::open();
    if (!host) return fail(host.error());
    auto inside = Rtnl::open_in(netns.get());
    if (!inside) return fail(inside.error());
    for (uint32_t i = 0; i < pool.slots(); i++) {
        uint32_t slot = (start + i) % pool.slots();
        Link l = link_for(pool, slot, ipv6);
        if (link_exists(l.host_if)) continue;
        if (auto made = host->add_veth(l.host_if, "eth0", netns.get()); !made) {
            // Taken between the check and the add by a create beside this one (an eth0
            // already in the sandbox is EEXIST too, but leaves the host name free).
            if (made.error().code == Code::exists && link_exists(l.host_if)) continue;
            return fail(std::move(made.error()).context("making " + l.host_if));
        }
        if (auto r = configure(*host, *inside, l, pool, pool.first + slot * 4); !r) {
            (void)remove_link(l.host_if);
            return fail(std::move(r.error()).context("setting up " + l.host_if));
        }
        return l;
    }
    return fail(make_error(Code::exhausted, "every one of the " + std::to_string(pool.slots()) +
                                            " sandbox network slots is in use (DSEC_NET_POOL)"));
}

Status remove_link(const std::string& host_if) {
    if (host_if.empty()) return {};
    auto host = Rtnl::open();
    if (!host) return fail(host.error());
    // Deleting one end deletes the pair; one already gone (with its sandbox's network
    // namespace) is fine.
    if (auto r = host->delete_link(host_if); !r && r.error().code != Code::not_found) return r;
    return {};
}

}  // namespace dsec::net
