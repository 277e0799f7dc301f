// dsec-reclaim ttl: destroys sandboxes past --ttl or --idle-ttl (lib/dsec/reclaim/ttl.h).
#include "dsec/reclaim/ttl.h"
#include "commands.h"

namespace dsec::reclaim_tool {

void add_ttl(CLI::App& app, Context& ctx) {
    auto dry_run = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand("ttl", "destroy sandboxes past their --ttl, or idle (no exec) past their --idle-ttl");
    cmd->footer(cli::example("  dsec-reclaim ttl --dry-run; dsec-reclaim ttl   # from cron, every minute"));
    cmd->add_flag("--dry-run", *dry_run, "list what would be destroyed, destroy nothing");
    cmd->callback([&ctx, dry_run] {
        ctx.action = [&ctx, dry_run]() -> Result<int> {
            // One event record per sandbox destroyed.
            if (auto r = reclaim::enforce_ttl(ctx.paths, *dry_run, ctx.report()); !r) return fail(r.error());
            return ctx.exit_code();
        };
    });
}

}  // namespace dsec::reclaim_tool
