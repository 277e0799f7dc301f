// dsec-layer: build and manage content-addressed EROFS layers.
#include "commands.h"

using namespace dsec;

int main(int argc, char** argv) {
    CLI::App app("dsec-layer: build and manage content-addressed EROFS layers", "dsec-layer");
    app.footer(cli::example(
        "  dsec-layer build ./rootfs --name base --label os=busybox\n"
        "  zcat python.tar.gz | dsec-layer import - --name python3.12\n"
        "  dsec-layer ls base python3.12 | dsec-mount --count 100 | dsec-run create -P 8"));
    cli::add_version(app);
    app.require_subcommand(1, 1);

    layer_tool::Context ctx;
    cli::add_path_options(app, ctx.paths);
    // Each subcommand registers its options and fills ctx.action when chosen.
    layer_tool::add_build(app, ctx);
    layer_tool::add_import(app, ctx);
    layer_tool::add_export(app, ctx);
    layer_tool::add_query(app, ctx);
    layer_tool::add_maintenance(app, ctx);
    layer_tool::add_publish(app, ctx);

    return cli::main(app, argc, argv, [&] { return ctx.action(); });
}
