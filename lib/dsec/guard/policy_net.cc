// The "network" part of a policy: egress destinations by address range or domain name.
#include <arpa/inet.h>
#include <sys/socket.h>

#include <charconv>

#include "dsec/guard/policy.h"
#include "dsec/guard/policy_parse.h"

namespace dsec::guard {

using nlohmann::json;

namespace {

// The one name table of Protocol.
constexpr std::pair<Protocol, std::string_view> kProtocolNames[] = {
    {Protocol::any, "any"}, {Protocol::tcp, "tcp"}, {Protocol::udp, "udp"}};

std::string_view protocol_name(Protocol p) {
    for (auto [value, name] : kProtocolNames)
        if (value == p) return name;
    return "any";
}

Result<unsigned> whole(std::string_view s, unsigned max, const std::string& where, const char* what) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v > max)
        return fail(policy_error(where, std::string(what) + " \"" + std::string(s) + "\" is not 0-" + std::to_string(max)));
    return v;
}

// "10.0.0.0/8", "fd00::/64", "192.0.2.7" (one address): host bits must be zero, so that
// a typo does not silently widen or narrow the range.
Status parse_cidr(const std::string& text, Destination& d, const std::string& where) {
    auto slash = text.find('/');
    std::string addr = text.substr(0, slash);
    d.family = addr.find(':') != std::string::npos ? AF_INET6 : AF_INET;
    unsigned bits = d.family == AF_INET6 ? 128 : 32;
    if (::inet_pton(d.family, addr.c_str(), d.addr.data()) != 1)
        return fail(policy_error(where, "\"" + addr + "\" is not an IPv4 or IPv6 address"));
    d.prefix = bits;
    if (slash != std::string::npos) {
        auto p = whole(std::string_view(text).substr(slash + 1), bits, where, "prefix length");
        if (!p) return fail(p.error());
        d.prefix = *p;
    }
    for (unsigned bit = d.prefix; bit < bits; bit++)
        if (d.addr[bit / 8] & (0x80 >> (bit % 8)))
            return fail(policy_error(where, "\"" + text + "\" has bits set past its prefix length"));
    return {};
}

// A host name: letters, digits, '-' and '.', labels of 1-63, at most 253 in all.
Status check_domain(const std::string& name, const std::string& where) {
    bool ok = !name.empty() && name.size() <= 253 && name.front() != '.' && name.back() != '.';
    size_t label = 0;
    bool digits_only = true;
    for (char c : name) {
        if (c == '.') {
            ok = ok && label > 0;
            label = 0;
            continue;
        }
        ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-') && ++label <= 63;
        digits_only = digits_only && std::isdigit(static_cast<unsigned char>(c));
    }
    if (!ok || digits_only) return fail(policy_error(where, "\"" + name + "\" is not a host name"));
    return {};
}

Status parse_ports(const json& j, Destination& d, const std::string& where) {
    if (!j.is_array() || j.empty()) return fail(policy_error(where, "must be a non-empty array of ports or \"FIRST-LAST\""));
    for (size_t i = 0; i < j.size(); i++) {
        std::string at = where + "[" + std::to_string(i) + "]";
        unsigned first = 0, last = 0;
        if (j[i].is_number_unsigned()) {
            first = last = j[i].get<unsigned>();
            if (j[i].get<uint64_t>() > 65535) first = last = 0;
        } else if (j[i].is_string()) {
            std::string s = j[i].get<std::string>();
            auto dash = s.find('-');
            auto a = whole(std::string_view(s).substr(0, dash), 65535, at, "port");
            if (!a) return fail(a.error());
            auto b = dash == std::string::npos ? a : whole(std::string_view(s).substr(dash + 1), 65535, at, "port");
            if (!b) return fail(b.error());
            first = *a;
            last = *b;
        } else {
            return fail(policy_error(at, "not a port or \"FIRST-LAST\""));
        }
        if (first == 0 || last < first) return fail(policy_error(at, "not a port 1-65535 or a range FIRST-LAST"));
        d.ports.emplace_back(uint16_t(first), uint16_t(last));
    }
    return {};
}

Result<Destination> parse_destination(const json& j, const std::string& where) {
    if (auto k = only_keys(j, {"cidr", "domain", "ports", "protocol"}, where); !k) return fail(k.error());
    Destination d;
    if (j.contains("cidr") == j.contains("domain")) return fail(policy_error(where, "needs one of \"cidr\" and \"domain\""));
    const char* key = j.contains("cidr") ? "cidr" : "domain";
    if (!j.at(key).is_string()) return fail(policy_error(where + "." + key, "not a string"));
    std::string text = j.at(key).get<std::string>();
    if (j.contains("cidr")) {
        if (auto r = parse_cidr(text, d, where + ".cidr"); !r) return fail(r.error());
    } else {
        if (auto r = check_domain(text, where + ".domain"); !r) return fail(r.error());
        d.domain = text;
    }
    if (j.contains("ports"))
        if (auto r = parse_ports(j.at("ports"), d, where + ".ports"); !r) return fail(r.error());
    if (j.contains("protocol")) {
        bool known = false;
        if (j.at("protocol").is_string())
            for (auto [value, name] : kProtocolNames)
                if (name == j.at("protocol").get<std::string>()) {
                    d.protocol = value;
                    known = true;
                }
        if (!known) return fail(policy_error(where + ".protocol", "must be \"tcp\", \"udp\" or \"any\""));
    }
    return d;
}

}  // namespace

Result<NetworkRules> parse_network(const json& j) {
    if (auto k = only_keys(j, {"allow"}, "network"); !k) return fail(k.error());
    NetworkRules n;
    if (!j.contains("allow")) return n;
    if (!j.at("allow").is_array()) return fail(policy_error("network.allow", "must be an array of destinations"));
    for (size_t i = 0; i < j.at("allow").size(); i++) {
        auto d = parse_destination(j.at("allow")[i], "network.allow[" + std::to_string(i) + "]");
        if (!d) return fail(d.error());
        n.allow.push_back(std::move(*d));
    }
    return n;
}

json destination_record(const Destination& d) {
    json out = json::object();
    if (!d.domain.empty()) {
        out["domain"] = d.domain;
    } else {
        char text[INET6_ADDRSTRLEN] = "";
        ::inet_ntop(d.family, d.addr.data(), text, sizeof text);
        out["cidr"] = std::string(text) + "/" + std::to_string(d.prefix);
    }
    json ports = json::array();
    for (auto [first, last] : d.ports)
        ports.push_back(first == last ? json(first) : json(std::to_string(first) + "-" + std::to_string(last)));
    out["ports"] = d.ports.empty() ? json("all") : ports;
    out["protocol"] = protocol_name(d.protocol);
    return out;
}

}  // namespace dsec::guard
