// dsec-run: create sandboxes, run commands in them, copy files, list and destroy them.
#include <cstring>

#include "dsec/cli/subcommands.h"
#include "dsec/ns/spawn.h"
#include "commands.h"

using namespace dsec;

int main(int argc, char** argv) {
    // An init run in a copy of us (one-shot sandboxes) hides our command line from inside.
    ns::remember_command_line(argc, argv);
    CLI::App app("dsec-run: create isolated sandboxes from mounted layers, run commands in them, destroy them",
                 "dsec-run");
    app.footer(cli::example(
        "  dsec-run run --layers base -- uname -a\n"
        "  dsec-layer ls base | dsec-mount --count 10 | dsec-run create -P 8 \\\n"
        "    | dsec-run exec -P 8 --json -- uname -a\n"
        "  id=$(dsec-run create --layers base --memory 512M | jq -r .id)\n"
        "  dsec-run exec -it $id -- sh; dsec-run cp ./src $id:/work\n"
        "  dsec-run snapshot $id --name task | jq -r '.parents[], .digest' | xargs dsec-layer ls \\\n"
        "    | dsec-mount | dsec-run create\n"
        "  dsec-run fork $id --count 4; dsec-run reset $id; dsec-run destroy $id\n"
        "  dsec-run run --pool 8 --layers base -- ./check   # drawn from 8 made ahead\n"
        "  s=$(dsec-run session open $id | jq -r .id); dsec-run session exec $s -- 'cd /src && make'\n"
        "  dsec-run log $id; dsec-run destroy --keep-log ./logs $id"));
    cli::add_version(app);
    app.require_subcommand(1, 1);

    run_tool::Context ctx;
    // Everything after "--" is the command to run, untouched by option parsing.
    int cut = argc;
    for (int i = 1; i < argc; i++)
        if (std::strcmp(argv[i], "--") == 0) {
            cut = i;
            break;
        }
    if (cut < argc) {
        ctx.has_command = true;
        ctx.command.assign(argv + cut + 1, argv + argc);
    }
    cli::add_path_options(app, ctx.paths);
    // Only the subcommand named is built (CLI11 builds all it is given before parsing).
    using run_tool::Context;
    auto add = [&](void (*f)(CLI::App&, Context&)) { return [&app, &ctx, f] { f(app, ctx); }; };
    const cli::Subcommands table[] = {
        {{"create"}, add(run_tool::add_create)},   {{"exec"}, add(run_tool::add_exec)},
        {{"run"}, add(run_tool::add_run)},         {{"cp"}, add(run_tool::add_cp)},
        {{"ls", "inspect"}, add(run_tool::add_query)}, {{"destroy"}, add(run_tool::add_destroy)},
        {{"snapshot"}, add(run_tool::add_snapshot)}, {{"fork"}, add(run_tool::add_fork)},
        {{"reset"}, add(run_tool::add_reset)},     {{"kill", "stats"}, add(run_tool::add_control)},
        {{"session"}, add(run_tool::add_session)}, {{"log"}, add(run_tool::add_log)},
        {{"logs"}, add(run_tool::add_logs)},       {{"wait"}, add(run_tool::add_wait)},
        {{"pool"}, add(run_tool::add_pool)},
    };
    cli::add_named_subcommands(cut, argv, table);

    return cli::main(app, cut, argv, [&] { return ctx.action(); });
}
