#include "dsec/sandbox/network.h"

#include <arpa/inet.h>
#include <linux/capability.h>
#include <sys/socket.h>

#include "dsec/net/cut.h"
#include "dsec/net/egress.h"
#include "dsec/net/link.h"
#include "dsec/net/nat.h"
#include "dsec/net/netlink.h"
#include "dsec/guard/egress_rules.h"
#include "dsec/guard/hosts.h"
#include "dsec/sys/process.h"
#include "dsec/sandbox/egress_names.h"
#include "dsec/sandbox/open.h"
#include "dsec/sys/fs.h"

namespace dsec::sandbox {

namespace {
// The link's IPv6 addresses in the egress record ("address6", "gateway6"), or none
// (the host does not forward IPv6).
void set_addresses6(json& egress, const net::Link& link) {
    egress.erase("address6");
    egress.erase("gateway6");
    if (link.sandbox_addr6.empty()) return;
    egress["address6"] = link.sandbox_addr6;
    egress["gateway6"] = link.host_addr6;
}
}  // namespace

Status check_egress_security(const Security& sec) {
    if (!sec.userns)
        return fail(make_error(Code::bad_input, "policy: network.allow: egress rules need the sandbox's own user namespace "
                                            "(not --userns=host)"));
    for (auto [cap, name] : {std::pair{CAP_NET_RAW, "NET_RAW"}, std::pair{CAP_NET_ADMIN, "NET_ADMIN"}})
        if (sec.caps & (uint64_t(1) << cap))
            return fail(make_error(Code::bad_input, std::string("policy: network.allow: egress rules cannot hold with ") +
                                                    name + " kept (--cap-add): packet sockets and tunnels go around "
                                                    "them"));
    return {};
}

Result<json> start_egress(const Paths& paths, const std::string& id, int init_pid, const std::string& unified_cgroup,
                          const guard::NetworkRules& rules) {
    if (unified_cgroup.empty())
        return fail(make_error(Code::unsupported, "network egress needs the unified cgroup tree (cgroup2), which this host "
                                              "has not mounted"));
    auto pool = net::pool_from_env();
    if (!pool) return fail(pool.error());
    // Names first: one that does not resolve stops everything before anything is made.
    auto names = resolve_names(rules, json::object());
    if (!names) return fail(names.error());
    auto table = guard::compile_rules(rules, resolved_of(*names));
    if (!table) return fail(table.error());
    {
        // The run directory's shared parts (the programs on its cgroup parent, the NAT
        // table) are made once, under its lock; the rest is the sandbox's own.
        auto held = net::lock_network(paths.run);
        if (!held) return fail(held.error());
        if (auto r = net::ensure_bpffs(paths.run); !r) return fail(r.error());
        if (auto r = net::nat_ensure(paths.run, *pool); !r) return fail(r.error());
        // Programs (and the sandbox's rules) first, so nothing leaves before they filter.
        if (auto r = net::attach_egress(paths.run, id, unified_cgroup, *table); !r) return fail(r.error());
    }
    auto undo = [&](Error e) -> Result<json> {
        (void)net::detach_egress(paths.run, id);
        return fail(std::move(e));
    };
    auto link = net::make_link(*pool, init_pid);
    if (!link) return undo(link.error());
    json egress = {{"interface", link->host_if},
                   {"gateway", link->host_addr},
                   {"address", link->sandbox_addr},
                   {"pins", net::pin_dir(paths.run, id)},
                   {"names", *names}};
    set_addresses6(egress, *link);
    if (auto r = write_hosts(paths, id, init_pid, egress); !r) {
        (void)net::remove_link(link->host_if);
        return undo(r.error());
    }
    return egress;
}

Status stop_egress(const Paths& paths, const std::string& id, const json& state) {
    const json egress = state.contains("egress") && state["egress"].is_object() ? state["egress"] : json::object();
    if (egress.empty() && !fs::exists(net::pin_dir(paths.run, id))) return {};
    // The veth first: once its rules are gone the sandbox must have no way out. Its
    // deletion (an RCU wait in the kernel) needs no lock: the name is the sandbox's.
    Status first = net::remove_link(egress.value("interface", ""));
    auto held = net::lock_network(paths.run);
    if (!held) return fail(held.error());
    if (auto r = net::detach_egress(paths.run, id); !r && first) first = std::move(r);
    return first;
}

Status relink_egress(const Paths& paths, const std::string& /*id*/, int init_pid, json& state) {
    if (!state.contains("egress") || !state["egress"].is_object()) return {};
    auto pool = net::pool_from_env();
    if (!pool) return fail(pool.error());
    json& egress = state["egress"];
    (void)net::remove_link(egress.value("interface", ""));
    {
        // gc may have dropped the table meanwhile (it does when no pins are left).
        auto held = net::lock_network(paths.run);
        if (!held) return fail(held.error());
        if (auto r = net::nat_ensure(paths.run, *pool); !r) return fail(r.error());
    }
    auto link = net::make_link(*pool, init_pid);
    if (!link) return fail(link.error());
    egress["interface"] = link->host_if;
    egress["gateway"] = link->host_addr;
    egress["address"] = link->sandbox_addr;
    set_addresses6(egress, *link);
    // The new init has a new mount namespace: the host's file goes over /etc/hosts again.
    std::string hosts = egress.value("hosts", "");
    if (!hosts.empty()) return guard::bind_hosts(init_pid, proc::process_start(init_pid), hosts);
    return {};
}

Result<bool> drop_unused_egress(const Paths& paths, bool dry_run) {
    auto held = net::lock_network(paths.run);
    if (!held) return fail(held.error());
    if (!net::pinned_ids(paths.run).empty()) return false;
    auto table = net::Rtnl::nft_table_exists(net::table_for(paths.run));
    if (!table) return fail(table.error());
    if (!*table && !fs::exists(net::shared_dir(paths.run))) return false;
    if (dry_run) return true;
    if (auto r = net::drop_programs(paths.run); !r) return fail(r.error());
    if (auto r = net::nat_drop_table(paths.run); !r) return fail(r.error());
    return true;
}

Result<EgressChange> change_egress(const Paths& paths, const std::string& id, const guard::NetworkRules& rules) {
    auto opened = open_sandbox(paths, id, Need::running_init);
    if (!opened) return fail(opened.error());
    State* state = &opened->state;
    EgressChange change;
    int pid = state->pid;
    json& fields = state->extra;
    if (!fields.contains("egress")) {
        auto sec = security_from_state(fields);
        if (!sec) return fail(sec.error());
        if (auto r = check_egress_security(*sec); !r) return fail(r.error());
        auto made = start_egress(paths, id, pid, opened->cg.unified_dir(), rules);
        if (!made) return fail(made.error());
        fields["egress"] = *made;
        change.started = true;
    } else {
        json& egress = fields["egress"];
        // Names already in force keep their addresses (refresh renews them); new ones
        // are resolved now, and one that does not resolve changes nothing.
        auto names = resolve_names(rules, egress.value("names", json::object()));
        if (!names) return fail(names.error());
        auto table = guard::compile_rules(rules, resolved_of(*names));
        if (!table) return fail(table.error());
        if (auto r = net::update_egress(paths.run, id, *table); !r) return fail(r.error());
        egress["names"] = *names;
        auto cut = net::cut_connections(pid, *table);
        if (!cut) return fail(std::move(cut.error()).context("the new rules are in force, but cutting connections"));
        change.cut = *cut;
        if (auto r = write_hosts(paths, id, pid, egress); !r)
            return fail(std::move(r.error()).context("the new rules are in force, but writing /etc/hosts"));
    }
    change.names = fields["egress"].value("names", json::object());
    guard::Policy shown;
    shown.network = rules;
    change.network = guard::policy_record(shown)["network"];
    if (!fields.contains("guard") || !fields["guard"].is_object())
        fields["guard"] = guard::policy_record(guard::Policy{});
    fields["guard"]["network"] = change.network;
    if (auto r = save(paths, *state); !r) return fail(r.error());
    return change;
}

Result<std::vector<json>> egress_events(const Paths& paths, const std::string& id) {
    std::vector<json> out;
    if (!fs::exists(net::pin_dir(paths.run, id))) return out;
    auto denials = net::read_denials(paths.run, id);
    if (!denials) {
        if (denials.error().code == Code::not_found) return out;  // destroyed meanwhile
        return fail(denials.error());
    }
    static const char* const kOps[] = {"?", "connect", "send", "socket"};
    for (auto& d : *denials) {
        json e = {{"type", "event"}, {"v", 1}, {"event", "egress_denied"}, {"id", id},
                  {"op", kOps[d.kind < 4 ? d.kind : 0]}, {"family", d.family}};
        char text[INET6_ADDRSTRLEN] = "";
        if (d.kind != 3) {
            ::inet_ntop(d.family == 6 ? AF_INET6 : AF_INET, d.addr.data(), text, sizeof text);
            e["dest"] = text;
            e["port"] = d.port;
        }
        e["protocol"] = d.proto == 6 ? json("tcp") : d.proto == 17 ? json("udp") : json(d.proto);
        e["count"] = d.count;
        out.push_back(std::move(e));
    }
    return out;
}

json egress_counts(const Paths& paths, const std::string& id) {
    auto events = egress_events(paths, id);
    if (!events || !fs::exists(net::pin_dir(paths.run, id))) return nullptr;
    uint64_t denied = 0;
    for (auto& e : *events) denied += e.value("count", uint64_t(0));
    return json{{"denied", denied}};
}

}  // namespace dsec::sandbox
