// --layers: a rootfs made on the spot from layer names (mounting them if needed).
#include "dsec/layer/store.h"
#include "dsec/mount/stack.h"
#include "commands.h"

namespace dsec::run_tool {

Result<mount::Rootfs> rootfs_from_layers(const Context& ctx, const std::vector<std::string>& names,
                                         const std::string& id, bool verify, bool disk_upper) {
    layer::Store store(ctx.paths.layers());
    std::vector<layer::Layer> layers;
    for (auto& name : names) {
        auto l = store.resolve(name);
        if (!l) return fail(l.error());
        layers.push_back(*l);
    }
    if (disk_upper) return mount::make_rootfs(ctx.paths, layers, id, verify);
    auto rootfs = mount::mount_stack(ctx.paths, layers, verify);
    if (rootfs) rootfs->id = id;
    return rootfs;
}

}  // namespace dsec::run_tool
