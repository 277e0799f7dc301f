// A sandbox's egress: what a policy with network.allow adds to a sandbox (a veth pair,
// NAT, the egress programs on its cgroup), recorded in its state as "egress", changed
// while it runs, and taken down by destroy.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dsec/guard/policy.h"
#include "dsec/sandbox/security.h"
#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// Whether egress rules can hold in a sandbox with `sec`: not with NET_RAW or NET_ADMIN
/// kept (packet sockets, which no cgroup program sees, and tunnels, whose outer packets
/// no socket of the sandbox sends, would go around them), nor without a user namespace.
/// Errors: bad_input naming what is in the way.
Status check_egress_security(const Security& sec);

/// Gives the running sandbox `id` (init `init_pid`, unified cgroup `unified_cgroup`)
/// egress limited to `rules`: programs first, so nothing leaves before they filter, then
/// the link and NAT, then the names in /etc/hosts. The rules' domains are resolved on
/// the host first; the programs are the run directory's, loaded by the first sandbox
/// that needs them (net/egress.h). Returns the state's "egress" record {"interface", "gateway",
/// "address", "pins", "names", "hosts"?} (egress_names.h). On error everything made is
/// removed. Errors: unresolved, unsupported (no unified cgroup tree), too_many, bpf,
/// helper_failed, exhausted, those of write_hosts.
Result<nlohmann::json> start_egress(const Paths& paths, const std::string& id, int init_pid,
                                    const std::string& unified_cgroup, const guard::NetworkRules& rules);

/// Takes down what start_egress() made, from the state's "egress" record (pins are
/// removed even without one: a create that died before saving it). Nothing there is
/// fine. Errors: those of the steps, after trying every step.
Status stop_egress(const Paths& paths, const std::string& id, const nlohmann::json& state);

/// After a reset started a new init (a new network namespace, the old veth gone with the
/// old one): a new link and NAT entry for `init_pid`, and the host's hosts file bound
/// again; the programs stay on the cgroup. Updates state["egress"]. Nothing to do
/// without egress. Errors: those of the link, NAT and bind_hosts.
Status relink_egress(const Paths& paths, const std::string& id, int init_pid, nlohmann::json& state);

/// When no sandbox of the run directory has egress any more: unpins the egress programs
/// (detaching them from the cgroup parent) and deletes the NAT table, which the first
/// egress sandbox made and later ones shared (dsec-reclaim gc). Returns whether there
/// was anything to remove (with `dry_run`, removes nothing). Errors: those of the steps.
Result<bool> drop_unused_egress(const Paths& paths, bool dry_run);

/// What a change did.
struct EgressChange {
    nlohmann::json network;  // the rules now in force, as the state records them
    nlohmann::json names;    // egress.names: what their domains resolved to, and when
    int cut = 0;             // connections destroyed because they are no longer allowed
    bool started = false;    // the sandbox had no egress before: link and programs made
};

/// Puts `rules` in force in the running sandbox `id` (caller holds its lock): the rule
/// table is switched in one step, then every connection the new rules refuse is cut;
/// a sandbox without egress gets it first. Domains new to the sandbox are resolved
/// first (those it has keep their addresses) and /etc/hosts follows. Saves the state.
/// Errors: not_running, unresolved, those of start_egress, update, cutting, write_hosts.
Result<EgressChange> change_egress(const Paths& paths, const std::string& id, const guard::NetworkRules& rules);

/// The denials the egress programs of sandbox `id` counted, one `event` record per
/// (operation, destination): {"type":"event","v":1,"event":"egress_denied","id","op":
/// "connect"|"send"|"socket","family":4|6|0,"dest","port","protocol","count"}. Empty
/// for a sandbox without egress. Errors: bpf.
Result<std::vector<nlohmann::json>> egress_events(const Paths& paths, const std::string& id);

/// {"denied": N} summed over egress_events(), for `dsec-run inspect`; null without egress.
nlohmann::json egress_counts(const Paths& paths, const std::string& id);

}  // namespace dsec::sandbox
