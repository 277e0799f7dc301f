// dsec-bench: measure dsec side by side with bubblewrap, runc, tar and cp, and plot it.
#include "commands.h"

using namespace dsec;

int main(int argc, char** argv) {
    CLI::App app("dsec-bench: measure dsec (create, exec, density, images) against bwrap, runc and tar; "
                 "writes bench records",
                 "dsec-bench");
    app.footer(cli::example(
        "  dsec-bench compare -n 30 --plot compare.svg | jq '.ratios'\n"
        "  dsec-bench density --count 1000 --raise-limits --plot density.svg\n"
        "  dsec-bench create -n 100 -P 4 | jq '.figures.create_ms.median'"));
    cli::add_version(app);
    app.require_subcommand(1, 1);

    bench_tool::Context ctx;
    cli::add_path_options(app, ctx.paths);
    // Each subcommand registers its options and fills ctx.action when chosen.
    bench_tool::add_compare(app, ctx);
    bench_tool::add_create(app, ctx);
    bench_tool::add_image(app, ctx);
    bench_tool::add_import(app, ctx);
    bench_tool::add_reclaim(app, ctx);

    return cli::main(app, argc, argv, [&]() -> Result<int> {
        auto r = ctx.action();
        // Everything the run made (layers, mounts, trees) goes with the workspace.
        ctx.ws.reset();
        return r;
    });
}
