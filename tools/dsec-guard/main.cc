// dsec-guard: per-task policies for sandboxes (files, syscalls, network, limits).
#include "commands.h"

using namespace dsec;

int main(int argc, char** argv) {
    CLI::App app("dsec-guard: check the per-task policies that dsec-run create --policy applies, and change a running sandbox's egress", "dsec-guard");
    app.footer(cli::example(
        "  dsec-guard check examples/policies/eval.json\n"
        "  dsec-layer ls base task-4711 | dsec-mount | dsec-run create --policy examples/policies/eval.json\n"
        "  dsec-guard net allow task-4711 10.0.0.5,443,tcp   # open the mirror for the install stage\n"
        "  dsec-guard net deny task-4711 10.0.0.5            # close it again; its connections are cut\n"
        "  dsec-guard events -f | jq -c 'select(.op == \"connect\")'\n"
        "  dsec-guard refresh | jq -c 'select(.changed)'            # from cron: names resolved again"));
    cli::add_version(app);
    app.require_subcommand(1, 1);

    guard_tool::Context ctx;
    cli::add_path_options(app, ctx.paths);
    // Validate a policy and print what it compiles to.
    guard_tool::add_check(app, ctx);
    // Change a running sandbox's egress rules.
    guard_tool::add_net(app, ctx);
    // Put a policy's network rules in force in a running sandbox.
    guard_tool::add_apply(app, ctx);
    // Print the egress denials the sandboxes' programs counted.
    guard_tool::add_events(app, ctx);
    // Resolve the egress rules' domain names again.
    guard_tool::add_refresh(app, ctx);

    return cli::main(app, argc, argv, [&] { return ctx.action(); });
}
