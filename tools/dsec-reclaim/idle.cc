// dsec-reclaim idle and resume: pause idle sandboxes and push their memory out, or wake one
// (lib/dsec/reclaim/pause.h). An exec or cp into a paused sandbox resumes it by itself.
#include "dsec/reclaim/pause.h"
#include "commands.h"

namespace dsec::reclaim_tool {

void add_idle(CLI::App& app, Context& ctx) {
    struct Opts {
        std::string after = "10m", sample = "500ms";
        bool dry_run = false;
    };
    auto o = std::make_shared<Opts>();
    auto* idle = app.add_subcommand("idle", "freeze sandboxes idle for --after (no exec, CPU flat) and push their "
                                            "memory out; report bytes reclaimed");
    idle->footer(cli::example("  dsec-reclaim idle --after 5m | jq .reclaimed"));
    idle->add_option("--after", o->after, "no exec or cp for this long")->type_name("DURATION")->capture_default_str();
    idle->add_option("--sample", o->sample, "measure CPU use over this long (flat: under 1% of a CPU)")
        ->type_name("DURATION")
        ->capture_default_str();
    idle->add_flag("--dry-run", o->dry_run, "list what would be paused, pause nothing");
    idle->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            auto after = seconds(o->after, "--after");
            if (!after) return fail(after.error());
            auto sample = milliseconds(o->sample, "--sample");
            if (!sample) return fail(sample.error());
            reclaim::IdleOptions options;
            options.after_s = *after;
            options.sample_ms = *sample;
            options.dry_run = o->dry_run;
            // One "paused" event per sandbox, with its memory before and after.
            if (auto r = reclaim::pause_idle(ctx.paths, options, ctx.report()); !r) return fail(r.error());
            return ctx.exit_code();
        };
    });

    auto ids = std::make_shared<std::vector<std::string>>();
    auto* resume = app.add_subcommand("resume", "thaw paused sandboxes (an exec or cp does it by itself)");
    resume->footer(cli::example("  dsec-reclaim resume box1"));
    resume->add_option("ID", *ids, "sandbox ids")->required();
    resume->callback([&ctx, ids] {
        ctx.action = [&ctx, ids]() -> Result<int> {
            for (auto& id : *ids) {
                auto e = reclaim::resume(ctx.paths, id);
                if (!e) {
                    ctx.report().problem(e.error());
                    continue;
                }
                if (auto r = jsonl::emit(*e); !r) return fail(r.error());
            }
            return ctx.exit_code();
        };
    });
}

}  // namespace dsec::reclaim_tool
