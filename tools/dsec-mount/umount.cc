// dsec-mount umount DIR: takes down what `dsec-mount --at DIR` put up.
#include <climits>
#include <cstdlib>

#include "dsec/mount/layers.h"
#include "dsec/mount/overlay.h"
#include "commands.h"

namespace dsec::mount_tool {

namespace {
std::string canonical(const std::string& path) {
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}
}  // namespace

void add_umount(CLI::App& app, Context& ctx) {
    auto dir = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("umount", "unmount an overlay that --at assembled (nothing else)");
    cmd->add_option("DIR", *dir, "where --at assembled it")->required();
    cmd->callback([&ctx, dir] {
        ctx.action = [&ctx, dir]() -> Result<int> {
            // Layer mounts are shared by every sandbox: only release takes them down.
            std::string layers = canonical(mount::layers_dir(ctx.paths)) + "/";
            if (canonical(*dir).rfind(layers, 0) == 0)
                return fail(make_error("bad_input", "a layer mount: use `dsec-mount release`", *dir));
            if (auto r = mount::detach(*dir); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::mount_tool
