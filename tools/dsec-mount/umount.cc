// dsec-mount umount DIR: takes down what `dsec-mount --at DIR` put up.
#include "dsec/mount/layers.h"
#include "dsec/mount/overlay.h"
#include "commands.h"

namespace dsec::mount_tool {

void add_umount(CLI::App& app, Context& ctx) {
    auto dir = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("umount", "unmount an overlay that --at assembled (nothing else)");
    cmd->footer(cli::example("  dsec-layer ls base | dsec-mount --at /mnt/look --read-only; dsec-mount umount /mnt/look"));
    cmd->add_option("DIR", *dir, "where --at assembled it")->required();
    cmd->callback([&ctx, dir] {
        ctx.action = [&ctx, dir]() -> Result<int> {
            // Layer mounts are shared by every sandbox: only release takes them down.
            if (mount::in_layers_dir(ctx.paths, *dir))
                return fail(make_error(Code::bad_input, "a layer mount: use `dsec-mount release`", *dir));
            if (auto r = mount::detach(*dir); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::mount_tool
