// The domain names of a sandbox's egress rules: resolved on the host when the rules are
// put in force (create, net allow, apply) and again by refresh, recorded in the state as
// egress.names {"NAME": {"addresses": [...], "resolved": TIME}}, compiled into the rule
// table as single addresses, and written into the sandbox's /etc/hosts (guard/hosts.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dsec/guard/egress_rules.h"
#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// The egress.names record for the domains of `rules`: a name `known` (an earlier
/// egress.names) holds keeps its addresses; any other is resolved now. Errors:
/// unresolved, naming the first name that does not resolve (nothing is half-resolved:
/// the caller changes nothing).
Result<nlohmann::json> resolve_names(const guard::NetworkRules& rules, const nlohmann::json& known);

/// The addresses of an egress.names record, by name.
guard::Resolved resolved_of(const nlohmann::json& names);

/// Writes egress["names"] into the sandbox's /etc/hosts: the first time, a file of the
/// host's (`<state dir>/hosts`, the image's /etc/hosts with dsec's block) is made and
/// bound over it and egress["hosts"] set; later, that file is rewritten in place (the
/// bind holds its inode; an image without /etc/hosts starts from an empty text). Nothing
/// to do without names and without a file. Errors: those of reading the image's file,
/// writing, bind_hosts.
Status write_hosts(const Paths& paths, const std::string& id, int init_pid, nlohmann::json& egress);

/// What a refresh did to one sandbox: the `refresh` record {"type":"refresh","v":1,"id",
/// "names":{NAME:{"addresses","resolved","was"?,"error"?}},"changed","cut"} and the
/// warnings (a name that no longer resolves keeps the addresses it had).
struct Refreshed {
    nlohmann::json record;
    std::vector<std::string> warnings;
};

/// Re-resolves the names of the running sandbox `id` (caller holds its lock) and, when
/// an address changed, switches its rule table, cuts connections to addresses no longer
/// allowed, rewrites its /etc/hosts and saves the state. A sandbox without names gives a
/// record with none. Errors: not_running, those of updating and cutting.
Result<Refreshed> refresh_names(const Paths& paths, const std::string& id);

}  // namespace dsec::sandbox
