// dsec-run kill and stats: signal a sandbox's commands; its resource use now.
#include "dsec/cgroup/cgroup.h"
#include "dsec/sandbox/open.h"
#include "dsec/sandbox/signal.h"
#include "commands.h"

namespace dsec::run_tool {

void add_control(CLI::App& app, Context& ctx) {
    struct KillArgs {
        std::vector<std::string> ids;
        std::string signal = "KILL";
    };
    auto k = std::make_shared<KillArgs>();
    auto* kill = app.add_subcommand("kill", "send a signal to every command running in sandboxes (never their init)");
    kill->footer(cli::example("  dsec-run kill box1; dsec-run kill -s TERM box1 box2"));
    kill->add_option("ID", k->ids, "sandbox ids")->required();
    kill->add_option("-s,--signal", k->signal, "signal name or number (default KILL)");
    kill->callback([&ctx, k] {
        ctx.action = [&ctx, k]() -> Result<int> {
            auto sig = sandbox::parse_signal(k->signal);
            if (!sig) return fail(sig.error());
            auto paths = ctx.sandbox_paths();
            int rc = 0;
            for (auto& id : k->ids) {
                if (auto r = sandbox::check_id(id); !r) return fail(r.error());
                auto sent = sandbox::signal_sandbox(paths, id, *sig);
                if (!sent) {
                    cli::report(std::move(sent.error()).about(id));
                    rc = cli::kExitFailed;
                    continue;
                }
                json rec = {{"type", "killed"}, {"id", id}, {"signal", *sig}, {"processes", *sent}};
                if (auto r = jsonl::emit(rec); !r) return fail(r.error());
            }
            return rc;
        };
    });

    auto ids = std::make_shared<std::vector<std::string>>();
    auto* stats = app.add_subcommand("stats", "resource use of sandboxes now: memory, cpu, processes, OOM kills");
    stats->footer(cli::example("  dsec-run stats box1 | jq .memory"));
    stats->add_option("ID", *ids, "sandbox ids")->required();
    stats->callback([&ctx, ids] {
        ctx.action = [&ctx, ids]() -> Result<int> {
            auto paths = ctx.sandbox_paths();
            int rc = 0;
            for (auto& id : *ids) {
                if (auto r = sandbox::check_id(id); !r) return fail(r.error());
                auto opened = sandbox::open_sandbox(paths, id, sandbox::Need::any);
                if (!opened) {
                    cli::report(std::move(opened.error()).about(id));
                    rc = cli::kExitFailed;
                    continue;
                }
                const sandbox::State* state = &opened->state;
                const cgroup::Cgroup& cg = opened->cg;
                auto mem = cg.memory_usage();
                auto cpu = cg.cpu_usage_ns();
                json rec = {{"type", "stats"},
                            {"id", id},
                            {"state", sandbox::lifecycle_name(state->lifecycle)},
                            {"memory_bytes", mem ? json(*mem) : json(nullptr)},
                            {"cpu_s", cpu ? json(double(*cpu) / 1e9) : json(nullptr)},
                            {"processes", cg.pids().size()},
                            {"oom_kills", cg.oom_kills()},
                            {"memcg", cgroup::memcg_name(cg.memcg())}};
                if (auto r = jsonl::emit(rec); !r) return fail(r.error());
            }
            return rc;
        };
    });
}

}  // namespace dsec::run_tool
