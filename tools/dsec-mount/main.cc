// dsec-mount: mount layers once per host and hand out sandbox roots as rootfs records.
#include "commands.h"

using namespace dsec;

int main(int argc, char** argv) {
    CLI::App app("dsec-mount: mount layers (once per host) and make rootfs records for sandboxes", "dsec-mount");
    app.footer(cli::example(
        "  dsec-layer ls base python3.12 task-4711 | dsec-mount --count 1000 | dsec-run create -P 8\n"
        "  dsec-mount --at /mnt/look --read-only base python3.12 && ls /mnt/look\n"
        "  dsec-mount umount /mnt/look; dsec-mount ls; dsec-mount release"));
    cli::add_version(app);
    app.require_subcommand(0, 1);

    mount_tool::Context ctx;
    cli::add_path_options(app, ctx.paths);
    // Subcommands set ctx.action when chosen; without one, the default fills it.
    mount_tool::add_stack(app, ctx);
    mount_tool::add_query(app, ctx);
    mount_tool::add_umount(app, ctx);

    return cli::main(app, argc, argv, [&] { return ctx.action(); });
}
