// dsec-guard net allow|deny ID DEST... and apply ID POLICY: a running sandbox's egress
// rules changed in place.
#include "dsec/guard/policy.h"
#include "dsec/json/jsonl.h"
#include "dsec/guard/egress_rules.h"
#include "dsec/sandbox/network.h"
#include "dsec/sandbox/state.h"
#include "commands.h"

namespace dsec::guard_tool {

namespace {
using nlohmann::json;

// The rules a sandbox's state records (none when it has no policy).
Result<guard::NetworkRules> recorded_rules(const json& state) {
    if (!state.contains("guard") || !state["guard"].is_object()) return guard::NetworkRules{};
    return guard::network_from_record(state["guard"].value("network", json::object()));
}

Status emit_change(const std::string& id, const sandbox::EgressChange& c) {
    return jsonl::emit(json{{"type", "network"}, {"v", 1}, {"id", id}, {"network", c.network},
                            {"names", c.names}, {"cut", c.cut}, {"started", c.started}});
}

Status change(const cli::Paths& p, const std::string& id, bool allow, const std::vector<std::string>& texts) {
    std::vector<guard::Destination> dests;
    for (auto& t : texts) {
        auto d = guard::parse_destination_text(t);
        if (!d) return fail(d.error());
        dests.push_back(std::move(*d));
    }
    sandbox::Paths paths(p);
    auto held = sandbox::lock(paths, id);
    if (!held) return fail(held.error());
    auto state = sandbox::load(paths, id);
    if (!state) return fail(state.error());
    auto rules = recorded_rules(state->extra);
    if (!rules) return fail(rules.error());
    Result<guard::NetworkRules> next = allow ? guard::with_added(*rules, dests) : guard::with_removed(*rules, dests);
    if (!next) return fail(std::move(next.error()).context("sandbox " + id));
    auto done = sandbox::change_egress(paths, id, *next);
    if (!done) return fail(done.error());
    return emit_change(id, *done);
}

// The parts of a policy `apply` cannot change in a running sandbox must be as they are.
Status same_besides_network(const json& state, const guard::Policy& policy, const std::string& path) {
    json want = guard::policy_record(policy);
    json have = state.contains("guard") && state["guard"].is_object() ? state["guard"] : guard::policy_record({});
    for (const char* part : {"files", "syscalls", "limits"})
        if (want.value(part, json()) != have.value(part, json()))
            return fail(make_error(Code::unsupported, std::string("policy: ") + part + " differs from the sandbox's; a " +
                                                      "running sandbox takes new network rules only (create a new one)",
                                   path));
    return {};
}

Status apply(const cli::Paths& p, const std::string& id, const std::string& file) {
    auto policy = guard::load_policy(file);
    if (!policy) return fail(policy.error());
    sandbox::Paths paths(p);
    auto held = sandbox::lock(paths, id);
    if (!held) return fail(held.error());
    auto state = sandbox::load(paths, id);
    if (!state) return fail(state.error());
    if (auto r = same_besides_network(state->extra, *policy, file); !r) return r;
    auto done = sandbox::change_egress(paths, id, policy->network);
    if (!done) return fail(done.error());
    return emit_change(id, *done);
}
}  // namespace

void add_net(CLI::App& app, Context& ctx) {
    auto* net = app.add_subcommand("net", "change a running sandbox's egress rules");
    net->footer(cli::example("  dsec-guard net allow task-4711 10.0.0.5,443,tcp\n  dsec-guard net deny task-4711 10.0.0.5"));
    net->require_subcommand(1, 1);
    for (bool allow : {true, false}) {
        auto id = std::make_shared<std::string>();
        auto dests = std::make_shared<std::vector<std::string>>();
        auto* cmd = net->add_subcommand(allow ? "allow" : "deny",
                                        allow ? "let the sandbox reach destinations"
                                              : "take destinations away and cut connections to them");
        cmd->add_option("ID", *id, "sandbox id")->required();
        cmd->add_option("DEST", *dests, "CIDR|DOMAIN[,PORT|FIRST-LAST...][,tcp|udp]")->required();
        cmd->footer(cli::example(allow ? "  dsec-guard net allow task-4711 pypi.org,443,tcp 10.0.0.0/24,80,tcp"
                                       : "  dsec-guard net deny task-4711 pypi.org      # held connections are cut"));
        cmd->callback([&ctx, allow, id, dests] {
            ctx.action = [&ctx, allow, id, dests]() -> Result<int> {
                if (auto r = change(ctx.paths, *id, allow, *dests); !r) return fail(r.error());
                return cli::kExitOk;
            };
        });
    }
}

void add_apply(CLI::App& app, Context& ctx) {
    auto id = std::make_shared<std::string>();
    auto file = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("apply", "put a policy's network rules in force in a running sandbox");
    cmd->footer(cli::example("  dsec-guard apply task-4711 examples/policies/install.json"));
    cmd->add_option("ID", *id, "sandbox id")->required();
    cmd->add_option("POLICY", *file, "policy file (JSON)")->required();
    cmd->callback([&ctx, id, file] {
        ctx.action = [&ctx, id, file]() -> Result<int> {
            if (auto r = apply(ctx.paths, *id, *file); !r) return fail(r.error());
            return cli::kExitOk;
        };
    });
}

}  // namespace dsec::guard_tool
