// dsec-guard refresh [ID...]: the domain names of running sandboxes' egress rules
// resolved again on the host, one refresh record per sandbox (for cron).
#include <cstdio>

#include "dsec/json/jsonl.h"
#include "dsec/sandbox/egress_names.h"
#include "dsec/sandbox/state.h"
#include "commands.h"

namespace dsec::guard_tool {

namespace {
using nlohmann::json;

// Whether the sandbox's state records names to refresh (without taking its lock).
bool has_names(const sandbox::Paths& paths, const std::string& id) {
    auto st = sandbox::load(paths, id);
    if (!st || st->lifecycle != sandbox::Lifecycle::running) return false;
    const json& egress = st->extra.value("egress", json::object());
    return egress.is_object() && !egress.value("names", json::object()).empty();
}

Status refresh_one(const sandbox::Paths& paths, const std::string& id) {
    auto held = sandbox::lock(paths, id);
    if (!held) return fail(held.error());
    auto done = sandbox::refresh_names(paths, id);
    if (!done) return fail(std::move(done.error()).about(id));
    // A name that stopped resolving is a warning: the sandbox keeps what it had.
    for (auto& w : done->warnings) std::fprintf(stderr, "dsec-guard: warning: %s\n", w.c_str());
    return jsonl::emit(std::move(done->record));
}
}  // namespace

void add_refresh(CLI::App& app, Context& ctx) {
    auto ids = std::make_shared<std::vector<std::string>>();
    auto* cmd = app.add_subcommand("refresh", "resolve the egress rules' domain names again (all sandboxes, or IDs)");
    cmd->footer(cli::example("  dsec-guard refresh | jq -c \'select(.changed)\'   # from cron"));
    cmd->add_option("ID", *ids, "sandbox ids (default: every running sandbox with names)");
    cmd->callback([&ctx, ids] {
        ctx.action = [&ctx, ids]() -> Result<int> {
            sandbox::Paths paths(ctx.paths);
            bool named = !ids->empty();
            std::vector<std::string> todo = named ? *ids : sandbox::list_ids(paths);
            int failed = 0;
            for (auto& id : todo) {
                if (!named && !has_names(paths, id)) continue;
                if (auto r = refresh_one(paths, id); !r) {
                    if (todo.size() == 1) return fail(r.error());
                    cli::report(r.error());
                    failed++;
                }
            }
            return failed ? cli::kExitFailed : cli::kExitOk;
        };
    });
}

}  // namespace dsec::guard_tool
