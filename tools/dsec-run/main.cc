// dsec-run: create sandboxes, run commands in them, copy files, list and destroy them.
#include <cstring>

#include "commands.h"

using namespace dsec;

int main(int argc, char** argv) {
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
    run_tool::add_create(app, ctx);
    run_tool::add_exec(app, ctx);
    run_tool::add_run(app, ctx);
    run_tool::add_cp(app, ctx);
    run_tool::add_query(app, ctx);
    run_tool::add_destroy(app, ctx);
    run_tool::add_snapshot(app, ctx);
    run_tool::add_fork(app, ctx);
    run_tool::add_reset(app, ctx);
    run_tool::add_control(app, ctx);
    run_tool::add_session(app, ctx);
    run_tool::add_log(app, ctx);
    run_tool::add_logs(app, ctx);
    run_tool::add_wait(app, ctx);

    return cli::main(app, cut, argv, [&] { return ctx.action(); });
}
