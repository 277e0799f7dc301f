#include "dsec/mount/overlay.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>

#include <cerrno>

#include "dsec/mount/fscontext.h"
#include "dsec/sys/fs.h"

namespace dsec::mount {

namespace {

// One read-only lower needs no overlay (overlayfs refuses a single lower without an
// upper anyway): a read-only clone of that mount serves.
Result<Fd> readonly_bind(const std::string& lower) {
    int fd = ::open_tree(AT_FDCWD, lower.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (fd < 0) return fail(sys_error("open_tree", lower));
    Fd tree(fd);
    struct mount_attr attr = {};
    attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV;
    if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
        return fail(sys_error("mount_setattr", lower));
    return tree;
}

}  // namespace

Error too_many_layers_error(size_t layers) {
    return make_error(Code::too_many_layers, std::to_string(layers) + " layers, overlayfs takes at most " +
                                             std::to_string(kMaxLowers) +
                                             ": squash some into one (dsec-layer import-image --squash)");
}

Result<Fd> make_overlay(const OverlaySpec& spec) {
    if (spec.lowerdirs.empty()) return fail(make_error(Code::bad_input, "an overlay needs at least one lower layer"));
    if (spec.lowerdirs.size() > kMaxLowers)
        return fail(too_many_layers_error(spec.lowerdirs.size()));
    if (spec.upper.empty() != spec.work.empty())
        return fail(make_error(Code::bad_input, "upper and work directories go together"));
    if (spec.upper.empty() && spec.lowerdirs.size() == 1) return readonly_bind(spec.lowerdirs[0]);

    auto ctx = FsContext::open("overlay");
    if (!ctx) return fail(ctx.error());
    // One lowerdir+ per layer, top first: no option string to overflow.
    for (auto& lower : spec.lowerdirs)
        if (auto r = ctx->set_dir("lowerdir+", lower); !r) return fail(r.error());
    if (!spec.upper.empty()) {
        if (auto r = ctx->set_dir("upperdir", spec.upper); !r) return fail(r.error());
        if (auto r = ctx->set_dir("workdir", spec.work); !r) return fail(r.error());
    }
    for (auto [key, value] : {std::pair{"metacopy", "off"}, {"redirect_dir", "nofollow"}, {"index", "off"}})
        if (auto r = ctx->set_string(key, value); !r) return fail(r.error());
    if (spec.volatile_upper && !spec.upper.empty())
        if (auto r = ctx->set_flag("volatile"); !r) return fail(r.error());
    unsigned attrs = MOUNT_ATTR_NODEV | (spec.upper.empty() ? MOUNT_ATTR_RDONLY : 0);
    return ctx->mount(attrs);
}

Status attach(const Fd& mount, const std::string& target) {
    if (::move_mount(mount.get(), "", AT_FDCWD, target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) < 0)
        return fail(sys_error("move_mount", target));
    return {};
}

Status detach(const std::string& target) {
    if (!fs::exists(target)) return fail(errno_error(ENOENT, "stat", target));
    if (!is_mount_root(target)) return fail(make_error(Code::bad_input, "not a mount point", target));
    long magic = fs_magic(target);
    if (magic != OVERLAYFS_SUPER_MAGIC && magic != long(EROFS_SUPER_MAGIC_V1))
        return fail(make_error(Code::bad_input, "not an overlay mount: refusing to unmount it", target));
    if (::umount2(target.c_str(), UMOUNT_NOFOLLOW) < 0) return fail(sys_error("umount", target));
    return {};
}

}  // namespace dsec::mount
