// Egress rules: the rule table a policy compiles to (masks, port ranges, protocols), the
// matching the programs and the connection cutter share, the text form `dsec-guard net`
// takes, adding and taking away destinations, and the state record read back.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>

#include "dsec/guard/egress_rules.h"
#include "dsec/guard/hosts.h"
#include "dsec/net/link.h"
#include "dsec/net/resolve.h"

using namespace dsec;
using nlohmann::json;

namespace {
guard::NetworkRules rules_of(const std::string& text) {
    auto r = guard::parse_network(json::parse(text));
    REQUIRE(r);
    return *r;
}

std::array<uint8_t, 16> addr(const char* text) {
    std::array<uint8_t, 16> a{};
    int family = std::string(text).find(':') != std::string::npos ? AF_INET6 : AF_INET;
    REQUIRE(::inet_pton(family, text, a.data()) == 1);
    return a;
}

bool ok(const net::RuleTable& t, const char* to, uint16_t port, uint8_t proto = 6) {
    int family = std::string(to).find(':') != std::string::npos ? AF_INET6 : AF_INET;
    return net::allows(t, family, addr(to), port, proto);
}
}  // namespace

TEST_CASE("egress: ranges, ports and protocols compile into rules that match exactly them") {
    auto t = guard::compile_rules(rules_of(R"({"allow": [
        {"cidr": "10.1.0.0/16", "ports": [443, "8000-8100"], "protocol": "tcp"},
        {"cidr": "192.0.2.7"},
        {"cidr": "fd00::/8", "ports": [53], "protocol": "udp"},
        {"domain": "mirror.example"}]})"));
    CHECK(t.error().code == Code::unresolved);  // a domain needs its addresses
    t = guard::compile_rules(rules_of(R"({"allow": [
        {"cidr": "10.1.0.0/16", "ports": [443, "8000-8100"], "protocol": "tcp"},
        {"cidr": "192.0.2.7"},
        {"cidr": "fd00::/8", "ports": [53], "protocol": "udp"},
        {"domain": "mirror.example"}]})"), {{"mirror.example", {}}});
    REQUIRE(t);
    CHECK(t->size() == 4);  // two port ranges, one whole range, one v6; a name without addresses adds nothing
    CHECK(ok(*t, "10.1.255.3", 443));
    CHECK(ok(*t, "10.1.0.1", 8050));
    CHECK_FALSE(ok(*t, "10.1.0.1", 8101));
    CHECK_FALSE(ok(*t, "10.1.0.1", 443, 17));  // tcp only
    CHECK_FALSE(ok(*t, "10.2.0.1", 443));
    CHECK(ok(*t, "192.0.2.7", 1, 17));
    CHECK_FALSE(ok(*t, "192.0.2.8", 1));
    CHECK(ok(*t, "fd12::1", 53, 17));
    CHECK_FALSE(ok(*t, "fd12::1", 53, 6));
    CHECK_FALSE(ok(*t, "fe80::1", 53, 17));
    // Not named, so not reachable: the metadata address, any other address.
    CHECK_FALSE(ok(*t, "169.254.169.254", 80));
    // Loopback is the sandbox's own.
    CHECK(ok(*t, "127.0.0.1", 9999));
    CHECK(ok(*t, "::1", 9999));
    // Nothing allowed: nothing but loopback.
    auto none = guard::compile_rules({});
    REQUIRE(none);
    CHECK(none->empty());
    CHECK_FALSE(ok(*none, "10.1.0.1", 443));
    // 0.0.0.0/0 is everything IPv4.
    auto all = guard::compile_rules(rules_of(R"({"allow": [{"cidr": "0.0.0.0/0"}]})"));
    REQUIRE(all);
    CHECK(ok(*all, "203.0.113.9", 1));
    CHECK_FALSE(ok(*all, "2001:db8::1", 1));
}

TEST_CASE("egress: a domain compiles into one exact rule per address it resolved to") {
    auto rules = rules_of(R"({"allow": [{"domain": "pypi.example", "ports": [443], "protocol": "tcp"},
                                        {"domain": "other.example"}]})");
    CHECK(guard::domains_of(rules) == std::vector<std::string>{"pypi.example", "other.example"});
    guard::Resolved resolved = {{"pypi.example", {"198.51.100.7", "2001:db8::7"}}, {"other.example", {"192.0.2.1"}}};
    auto t = guard::compile_rules(rules, resolved);
    REQUIRE(t);
    CHECK(t->size() == 3);
    CHECK(ok(*t, "198.51.100.7", 443));
    CHECK_FALSE(ok(*t, "198.51.100.7", 80));     // the name's ports only
    CHECK_FALSE(ok(*t, "198.51.100.7", 443, 17));  // and its protocol
    CHECK_FALSE(ok(*t, "198.51.100.8", 443));    // /32: not the neighbour
    CHECK(ok(*t, "2001:db8::7", 443));
    CHECK_FALSE(ok(*t, "2001:db8::8", 443));     // /128
    CHECK(ok(*t, "192.0.2.1", 9, 17));
    resolved["other.example"] = {"not an address"};
    CHECK(guard::compile_rules(rules, resolved).error().code == Code::bad_input);
}

TEST_CASE("egress: the sandbox's /etc/hosts keeps the image's lines and ends with dsec's block") {
    guard::Resolved resolved = {{"pypi.example", {"198.51.100.7", "2001:db8::7"}}};
    std::string image = "127.0.0.1 localhost\n# a comment\n\n10.9.9.9 pypi.example\n10.9.9.8 build pypi.example cache\n";
    std::string text = guard::hosts_text(image, resolved, "T1");
    CHECK(text == "127.0.0.1 localhost\n# a comment\n\n10.9.9.8 build cache\n" + std::string(guard::kHostsMarker) +
                      " at T1 (read-only)\n198.51.100.7 pypi.example\n2001:db8::7 pypi.example\n");
    // Written again over its own text: the block is replaced, not repeated.
    resolved["pypi.example"] = {"198.51.100.9"};
    std::string again = guard::hosts_text(text, resolved, "T2");
    CHECK(again == "127.0.0.1 localhost\n# a comment\n\n10.9.9.8 build cache\n" + std::string(guard::kHostsMarker) +
                       " at T2 (read-only)\n198.51.100.9 pypi.example\n");
    // No names left: the block says so and holds nothing.
    CHECK(guard::hosts_text(again, {}, "T3").ends_with(" at T3 (read-only)\n"));
}

// (A name that does not resolve is test 94's: here it would ask the host's DNS.)
TEST_CASE("egress: names resolve with the host's resolver, /etc/hosts first") {
    auto local = net::resolve_name("localhost");
    REQUIRE(local);
    CHECK(std::find(local->begin(), local->end(), "127.0.0.1") != local->end());
}

TEST_CASE("egress: a table past the programs' size is refused") {
    json allow = json::array();
    json ports = json::array();
    for (int p = 1; p <= 200; p++) ports.push_back(p);
    allow.push_back({{"cidr", "10.0.0.0/8"}, {"ports", ports}});
    allow.push_back({{"cidr", "10.0.0.0/16"}, {"ports", ports}});
    auto t = guard::compile_rules(rules_of(json{{"allow", allow}}.dump()));
    REQUIRE_FALSE(t);
    CHECK(t.error().code == Code::too_many);
}

TEST_CASE("egress: the text form of a destination") {
    auto d = guard::parse_destination_text("10.1.2.3,80,8000-8100,tcp");
    REQUIRE(d);
    CHECK(guard::destination_record(*d) ==
          json({{"cidr", "10.1.2.3/32"}, {"ports", {80, "8000-8100"}}, {"protocol", "tcp"}}));
    d = guard::parse_destination_text("fd00::/8");
    REQUIRE(d);
    CHECK(guard::destination_record(*d)["cidr"] == "fd00::/8");
    d = guard::parse_destination_text("mirror.example,443");
    REQUIRE(d);
    CHECK(d->domain == "mirror.example");
    auto bad = guard::parse_destination_text("10.0.0.1/8");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "destination \"10.0.0.1/8\".cidr: \"10.0.0.1/8\" has bits set past its prefix length");
    bad = guard::parse_destination_text("10.0.0.1,0");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.starts_with("destination \"10.0.0.1,0\".ports[0]:"));
    CHECK_FALSE(guard::parse_destination_text("10.0.0.1,http"));
}

TEST_CASE("egress: allow adds once, deny takes away a whole range or one exact rule") {
    auto rules = rules_of(R"({"allow": [{"cidr": "10.0.0.5/32", "ports": [80]},
                                        {"cidr": "10.0.0.5/32", "ports": [443], "protocol": "tcp"},
                                        {"cidr": "10.0.0.6/32"}]})");
    auto again = guard::with_added(rules, {*guard::parse_destination_text("10.0.0.6")});
    CHECK(again.allow.size() == 3);
    auto more = guard::with_added(rules, {*guard::parse_destination_text("10.0.0.7,22")});
    CHECK(more.allow.size() == 4);
    auto exact = guard::with_removed(rules, {*guard::parse_destination_text("10.0.0.5,443,tcp")});
    REQUIRE(exact);
    CHECK(exact->allow.size() == 2);
    auto whole = guard::with_removed(rules, {*guard::parse_destination_text("10.0.0.5")});
    REQUIRE(whole);
    REQUIRE(whole->allow.size() == 1);
    CHECK(guard::destination_record(whole->allow[0])["cidr"] == "10.0.0.6/32");
    auto typo = guard::with_removed(rules, {*guard::parse_destination_text("10.0.0.9")});
    REQUIRE_FALSE(typo);
    CHECK(typo.error().code == Code::not_found);
}

TEST_CASE("egress: rules survive the round trip through a sandbox's state") {
    auto rules = rules_of(R"({"allow": [{"cidr": "10.1.0.0/16", "ports": [443, "8000-8100"], "protocol": "tcp"},
                                        {"cidr": "fd00::/8"}]})");
    guard::Policy p;
    p.network = rules;
    json record = guard::policy_record(p)["network"];
    auto back = guard::network_from_record(record);
    REQUIRE(back);
    guard::Policy q;
    q.network = *back;
    CHECK(guard::policy_record(q)["network"] == record);
    auto empty = guard::network_from_record(json::object());
    REQUIRE(empty);
    CHECK(empty->empty());
}

TEST_CASE("egress: address slots are /30s of the pool, named after the slot") {
    net::Pool pool;
    auto l = net::link_for(pool, 0);
    CHECK(l.host_if == "dsec-n0");
    CHECK(l.host_addr == "100.64.0.1");
    CHECK(l.sandbox_addr == "100.64.0.2");
    l = net::link_for(pool, pool.slots() - 1);
    CHECK(l.host_if == "dsec-n1048575");
    CHECK(l.host_if.size() < 16);  // IFNAMSIZ
    CHECK(l.sandbox_addr == "100.127.255.254");
    ::setenv("DSEC_NET_POOL", "10.99.0.0/24", 1);
    auto small = net::pool_from_env();
    REQUIRE(small);
    CHECK(small->slots() == 64);
    CHECK(net::link_for(*small, 1).sandbox_addr == "10.99.0.6");
    ::setenv("DSEC_NET_POOL", "10.99.0.1/24", 1);
    CHECK_FALSE(net::pool_from_env());
    ::setenv("DSEC_NET_POOL", "10.99.0.0/30", 1);
    CHECK_FALSE(net::pool_from_env());
    ::unsetenv("DSEC_NET_POOL");
}

TEST_CASE("egress: IPv6 addresses are /126s of a /64, only when asked for") {
    net::Pool pool;
    CHECK(net::pool6_text(pool) == "fdd5:ec00:0:1::/64");
    CHECK(net::link_for(pool, 3).sandbox_addr6.empty());
    auto l = net::link_for(pool, 3, true);
    CHECK(l.host_addr6 == "fdd5:ec00:0:1::d");
    CHECK(l.sandbox_addr6 == "fdd5:ec00:0:1::e");
    CHECK(net::link_for(pool, pool.slots() - 1, true).sandbox_addr6 == "fdd5:ec00:0:1::3f:fffe");
    ::setenv("DSEC_NET_POOL6", "fd12:3456:789a:1::/64", 1);
    auto other = net::pool_from_env();
    REQUIRE(other);
    CHECK(net::link_for(*other, 0, true).sandbox_addr6 == "fd12:3456:789a:1::2");
    for (const char* bad : {"fd12:3456:789a:1::/48", "fd12:3456:789a:1::5/64", "fd12::zz/64", "10.0.0.0/8", "fd12::"}) {
        ::setenv("DSEC_NET_POOL6", bad, 1);
        CHECK_MESSAGE(!net::pool_from_env(), bad);
    }
    ::unsetenv("DSEC_NET_POOL6");
}
