// A policy's egress destinations: compiled into the rule table the egress programs read
// (net/table.h), written as `dsec-guard net` takes them, and added or taken away.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dsec/guard/policy.h"
#include "dsec/net/table.h"
#include "dsec/sys/error.h"

namespace dsec::guard {

/// The addresses each domain of a rule set resolved to (text, as net::resolve_name gives).
using Resolved = std::map<std::string, std::vector<std::string>>;

/// Compiles the destinations: a range as it is, a domain as one /32 or /128 rule per
/// address `resolved` holds for it, with the domain's ports and protocol. Errors:
/// too_many past DSEC_EGRESS_MAX_RULES rules, unresolved for a domain `resolved` lacks.
Result<net::RuleTable> compile_rules(const NetworkRules& rules, const Resolved& resolved = {});

/// The domains of `rules`, each once, in order.
std::vector<std::string> domains_of(const NetworkRules& rules);

/// The text form `dsec-guard net` takes: "CIDR|DOMAIN[,PORT|FIRST-LAST...][,tcp|udp]",
/// e.g. "10.1.2.3,80,8000-8100,tcp". Errors: bad_input naming the part at fault.
Result<Destination> parse_destination_text(const std::string& text);

/// True when `a` and `b` name the same range or domain, ports and protocol.
bool same_destination(const Destination& a, const Destination& b);

/// The rules back from their record (policy_record()'s "network" object, as a sandbox's
/// state keeps it). Errors: bad_input naming the field.
Result<NetworkRules> network_from_record(const nlohmann::json& record);

/// `rules` with each of `more` added unless the same destination is there already.
NetworkRules with_added(NetworkRules rules, const std::vector<Destination>& more);

/// `rules` without `gone`: a destination given with neither ports nor protocol removes
/// every rule for its range or domain; one with them removes only the same rule.
/// Errors: not_found naming a destination that matches no rule (a typo must not pass
/// for a denial).
Result<NetworkRules> with_removed(NetworkRules rules, const std::vector<Destination>& gone);

}  // namespace dsec::guard
