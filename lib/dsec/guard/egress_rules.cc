#include "dsec/guard/egress_rules.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace dsec::guard {

namespace {
// The prefix mask of `bits` over four network-order words.
void mask_words(unsigned bits, unsigned total, uint32_t out[4]) {
    for (unsigned w = 0; w < 4; w++) {
        unsigned first = w * 32;
        unsigned have = first >= total ? 0 : bits > first ? std::min(32u, bits - first) : 0;
        uint32_t host = have == 0 ? 0 : have == 32 ? 0xffffffffu : ~((1u << (32 - have)) - 1);
        out[w] = first >= total ? 0 : htonl(host);
    }
}

uint8_t proto_number(Protocol p) {
    return p == Protocol::tcp ? 6 : p == Protocol::udp ? 17 : 0;
}

// Appends the rules of one address range `d` (ports and protocol included).
void add_range(const Destination& d, net::RuleTable& table) {
    dsec_egress_rule r{};
    r.family = d.family == AF_INET6 ? 6 : 4;
    r.proto = proto_number(d.protocol);
    std::memcpy(r.addr, d.addr.data(), r.family == 6 ? 16 : 4);
    mask_words(d.prefix, r.family == 6 ? 128 : 32, r.mask);
    for (int w = 0; w < 4; w++) r.addr[w] &= r.mask[w];
    std::vector<std::pair<uint16_t, uint16_t>> ports = d.ports;
    if (ports.empty()) ports.emplace_back(0, 65535);
    for (auto [lo, hi] : ports) {
        r.port_lo = lo;
        r.port_hi = hi;
        table.push_back(r);
    }
}
}  // namespace

Result<net::RuleTable> compile_rules(const NetworkRules& rules, const Resolved& resolved) {
    net::RuleTable table;
    for (auto& d : rules.allow) {
        if (d.domain.empty()) {
            add_range(d, table);
            continue;
        }
        auto found = resolved.find(d.domain);
        if (found == resolved.end())
            return fail(make_error(Code::unresolved, "domain \"" + d.domain + "\" has not been resolved"));
        for (auto& text : found->second) {
            Destination one = d;
            one.domain.clear();
            one.family = text.find(':') != std::string::npos ? AF_INET6 : AF_INET;
            one.prefix = one.family == AF_INET6 ? 128 : 32;
            one.addr = {};
            if (::inet_pton(one.family, text.c_str(), one.addr.data()) != 1)
                return fail(make_error(Code::bad_input, "domain \"" + d.domain + "\": \"" + text + "\" is not an address"));
            add_range(one, table);
        }
    }
    if (table.size() > DSEC_EGRESS_MAX_RULES)
        return fail(make_error(Code::too_many, "network.allow compiles to " + std::to_string(table.size()) +
                                               " (range, ports) rules; at most " +
                                               std::to_string(DSEC_EGRESS_MAX_RULES) + " fit"));
    return table;
}

std::vector<std::string> domains_of(const NetworkRules& rules) {
    std::vector<std::string> out;
    for (auto& d : rules.allow)
        if (!d.domain.empty() && std::find(out.begin(), out.end(), d.domain) == out.end()) out.push_back(d.domain);
    return out;
}

Result<Destination> parse_destination_text(const std::string& text) {
    nlohmann::json j = nlohmann::json::object();
    nlohmann::json ports = nlohmann::json::array();
    size_t start = 0;
    for (int part = 0; start <= text.size(); part++) {
        size_t comma = text.find(',', start);
        std::string field = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        start = comma == std::string::npos ? text.size() + 1 : comma + 1;
        if (part == 0) {
            // An address has digits, dots, colons and a slash only; a name has a letter.
            bool address = field.find_first_not_of("0123456789abcdefABCDEF.:/") == std::string::npos &&
                      (field.find(':') != std::string::npos ||
                       field.find_first_not_of("0123456789./") == std::string::npos);
            j[address ? "cidr" : "domain"] = field;
        } else if (field == "tcp" || field == "udp" || field == "any") {
            j["protocol"] = field;
        } else if (!field.empty() && field.find_first_not_of("0123456789") == std::string::npos && field.size() < 6) {
            ports.push_back(std::stoul(field));
        } else {
            ports.push_back(field);
        }
    }
    if (!ports.empty()) j["ports"] = ports;
    auto parsed = parse_network(nlohmann::json{{"allow", nlohmann::json::array({j})}});
    if (!parsed) {
        // "policy: network.allow[0].cidr: ..." becomes "destination \"TEXT\".cidr: ...".
        Error e = parsed.error();
        std::string_view prefix = "policy: network.allow[0]";
        std::string whole = e.detail();
        std::string rest = whole.starts_with(prefix) ? whole.substr(prefix.size()) : ": " + whole;
        e.message = "destination \"" + text + "\"" + rest;
        e.steps.clear();
        // The field as the destination's own: "cidr", "ports[0]".
        if (e.field.starts_with(prefix)) e.field = e.field.substr(std::min(e.field.size(), prefix.size() + 1));
        return fail(std::move(e));
    }
    return parsed->allow.front();
}

bool same_destination(const Destination& a, const Destination& b) {
    return destination_record(a) == destination_record(b);
}

Result<NetworkRules> network_from_record(const nlohmann::json& record) {
    if (!record.is_object()) return NetworkRules{};
    nlohmann::json allow = nlohmann::json::array();
    for (auto d : record.value("allow", nlohmann::json::array())) {
        // "all" is how a record says what a policy says by leaving "ports" out.
        if (d.is_object() && d.contains("ports") && d["ports"] == "all") d.erase("ports");
        allow.push_back(d);
    }
    return parse_network(nlohmann::json{{"allow", allow}});
}

NetworkRules with_added(NetworkRules rules, const std::vector<Destination>& more) {
    for (auto& d : more)
        if (std::none_of(rules.allow.begin(), rules.allow.end(), [&](auto& have) { return same_destination(have, d); }))
            rules.allow.push_back(d);
    return rules;
}

Result<NetworkRules> with_removed(NetworkRules rules, const std::vector<Destination>& gone) {
    for (auto& d : gone) {
        auto record = destination_record(d);
        bool whole = d.ports.empty() && d.protocol == Protocol::any;
        auto matches = [&](const Destination& have) {
            if (!whole) return same_destination(have, d);
            auto h = destination_record(have);
            return h.value("cidr", "") == record.value("cidr", "") && h.value("domain", "") == record.value("domain", "");
        };
        auto before = rules.allow.size();
        std::erase_if(rules.allow, matches);
        if (rules.allow.size() == before)
            return fail(make_error(Code::not_found, "no allowed destination matches " + record.dump()));
    }
    return rules;
}

}  // namespace dsec::guard
