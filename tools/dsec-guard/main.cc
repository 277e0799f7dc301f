// dsec-guard: per-task policies for sandboxes (files, syscalls, network, limits).
#include "commands.h"

using namespace dsec;

int main(int argc, char** argv) {
    CLI::App app("dsec-guard: check the per-task policies that dsec-run create --policy applies", "dsec-guard");
    app.footer(cli::example(
        "  dsec-guard check examples/policies/eval.json\n"
        "  dsec-layer ls base task-4711 | dsec-mount | dsec-run create --policy examples/policies/eval.json"));
    cli::add_version(app);
    app.require_subcommand(1, 1);

    guard_tool::Context ctx;
    cli::add_path_options(app, ctx.paths);
    // Validate a policy and print what it compiles to.
    guard_tool::add_check(app, ctx);

    return cli::main(app, argc, argv, [&] { return ctx.action(); });
}
