// dsec-run log: a sandbox's command log as records.
#include <unistd.h>

#include "dsec/sandbox/log.h"
#include "commands.h"

namespace dsec::run_tool {

void add_log(CLI::App& app, Context& ctx) {
    struct Opts {
        std::string id;
        bool follow = false;
    };
    auto o = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("log", "a sandbox's command log: every exec, session command and cp, as records");
    cmd->footer(cli::example("  dsec-run log box1 | jq -c 'select(.kind == \"exec\" and .exit_code != 0) | {argv, exit_code}'\n"
                             "  dsec-run log -f box1 | jq -c '{kind, exit_code}'"));
    cmd->add_option("ID", o->id, "sandbox id")->required();
    cmd->add_flag("-f,--follow", o->follow, "keep printing records as they are appended, until the sandbox goes");
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            if (auto r = sandbox::check_id(o->id); !r) return fail(r.error());
            if (auto r = sandbox::print_log(ctx.sandbox_paths(), o->id, o->follow, STDOUT_FILENO); !r) return fail(r.error());
            return cli::kExitOk;
        };
    });
}

}  // namespace dsec::run_tool
