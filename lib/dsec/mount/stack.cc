#include "dsec/mount/stack.h"

#include <sys/stat.h>

#include <cerrno>

#include "dsec/mount/layers.h"
#include "dsec/mount/overlay.h"
#include "dsec/sys/fs.h"

namespace dsec::mount {

std::string sandbox_dir(const Paths& paths, const std::string& id) { return paths.root + "/sandboxes/" + id; }

Result<std::string> ensure_mounted(const Paths& paths, const layer::Store& store, const layer::Layer& layer,
                                   bool verify) {
    auto mp = mount_layer(paths, store, layer, verify);
    if (!mp) return fail(std::move(mp.error()).context("layer " + (layer.name.empty() ? layer.digest : layer.name)));
    return mp;
}

// mkdir that accepts an existing directory (a reset may reuse an id).
static Status make_dir(const std::string& path, unsigned mode) {
    if (::mkdir(path.c_str(), mode) < 0 && errno != EEXIST) return fail(sys_error("mkdir", path));
    return {};
}

Result<Rootfs> mount_stack(const Paths& paths, const std::vector<layer::Layer>& base_first, bool verify) {
    if (base_first.empty()) return fail(make_error(Code::bad_input, "a rootfs needs at least one layer"));
    if (base_first.size() > kMaxLowers)
        return fail(too_many_layers_error(base_first.size()));
    layer::Store store(paths.layers());
    Rootfs rootfs;
    for (auto& l : base_first) {
        auto mp = ensure_mounted(paths, store, l, verify);
        if (!mp) return fail(mp.error());
        rootfs.layers.push_back({l.digest, l.name, *mp});
        rootfs.lowerdirs.insert(rootfs.lowerdirs.begin(), *mp);
        // The topmost layer that carries an image config decides it.
        if (l.config) rootfs.config = l.to_record()["config"];
    }
    return rootfs;
}

Result<Rootfs> make_rootfs(const Paths& paths, const std::vector<layer::Layer>& base_first, std::string id,
                           bool verify) {
    if (id.empty()) id = random_hex(kRootfsIdBytes);
    if (auto r = check_id(id); !r) return fail(r.error());
    auto rootfs = mount_stack(paths, base_first, verify);
    if (!rootfs) return fail(rootfs.error());
    rootfs->id = id;

    std::string dir = sandbox_dir(paths, id);
    // <root>/sandboxes exists but for the first time: make it only when it is missing.
    if (auto r = make_dir(dir, 0700); !r) {
        if (r.error().err != ENOENT) return fail(r.error());
        if (auto p = fs::mkdir_p(paths.root + "/sandboxes", 0755); !p) return fail(p.error());
        if (auto again = make_dir(dir, 0700); !again) return fail(again.error());
    }
    rootfs->upper = dir + "/upper";
    rootfs->work = dir + "/work";
    // The sandbox directory (above) is private to root; the upper is the sandbox's "/".
    for (auto [path, mode] : {std::pair{rootfs->upper, 0755u}, {rootfs->work, 0700u}})
        if (auto r = make_dir(path, mode); !r) return fail(r.error());
    return rootfs;
}

}  // namespace dsec::mount
