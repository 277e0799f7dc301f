// dsec-reclaim gc: removes what killed or crashed runs left (see lib/dsec/reclaim/gc.h).
#include "dsec/reclaim/gc.h"
#include "commands.h"

namespace dsec::reclaim_tool {

void add_gc(CLI::App& app, Context& ctx) {
    struct Opts {
        bool dry_run = false;
        std::string grace = "15m";
    };
    auto o = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("gc", "remove what killed or crashed runs left: dead sandboxes, cgroups, uppers, "
                                         "id ranges, unused layer mounts, build temp files");
    cmd->footer(cli::example("  dsec-reclaim gc --dry-run | jq -r .kind | sort | uniq -c\n  dsec-reclaim gc --grace 5m         # from cron"));
    cmd->add_flag("--dry-run", o->dry_run, "list what would be removed, remove nothing");
    cmd->add_option("--grace", o->grace,
                    "leave uppers and state directories younger than this alone: a create may be on its way to them")
        ->type_name("DURATION")
        ->capture_default_str();
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            auto grace = seconds(o->grace, "--grace");
            if (!grace) return fail(grace.error());
            // One pass; each removal is an event record, each failed one an error record.
            if (auto r = reclaim::collect_garbage(ctx.paths, {o->dry_run, *grace}, ctx.report()); !r)
                return fail(r.error());
            return ctx.exit_code();
        };
    });
}

}  // namespace dsec::reclaim_tool
