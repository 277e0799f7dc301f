// dsec-run destroy: ids as arguments or sandbox records on stdin.
#include "commands.h"

namespace dsec::run_tool {

void add_destroy(CLI::App& app, Context& ctx) {
    struct Opts {
        std::vector<std::string> ids;
        bool force = false;
        size_t parallel = 1;
        std::string keep_log;
    };
    auto o = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("destroy", "kill everything in sandboxes and remove them (ids or records on stdin)");
    cmd->footer(cli::example("  dsec-run destroy box1 box2\n"
                             "  dsec-run ls --label job=eval | dsec-run destroy -P 8"));
    cmd->add_option("ID", o->ids, "sandbox ids; none: sandbox records on stdin");
    cmd->add_flag("-f,--force", o->force, "an unknown or already destroyed id is not an error (state \"absent\")");
    cmd->add_option("-P,--parallel", o->parallel, "destroy up to N sandboxes at once")->check(CLI::Range(1, 256));
    cmd->add_option("--keep-log", o->keep_log, "first copy each sandbox's command log to DIR/ID.log.jsonl");
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            auto ids = ids_or_records(o->ids);
            if (!ids) return fail(ids.error());
            auto paths = ctx.sandbox_paths();
            auto missing = o->force ? sandbox::Missing::ok : sandbox::Missing::error;
            // One sandbox: what is left of it once nothing runs (its namespaces, its upper)
            // goes in a child as we exit; a batch lets each go in place.
            sandbox::Remains remains;
            bool one = ids->size() == 1;
            size_t failed = for_each_parallel(ids->size(), o->parallel, [&](size_t i) -> Status {
                auto rec = sandbox::destroy(paths, (*ids)[i], missing, o->keep_log, one ? &remains : nullptr);
                if (!rec) return fail(std::move(rec.error()).about((*ids)[i]));
                return jsonl::emit(*rec);
            });
            int code = failed ? cli::kExitFailed : cli::kExitOk;
            if (remains) exit_leaving_remains(code, remains);
            (void)remains.finish();
            return code;
        };
    });
}

}  // namespace dsec::run_tool
