// Overlay assembly with the new mount API: one `lowerdir+` per layer, so there is no
// option-string limit. Used by dsec-run inside each sandbox's own mount namespace and by
// `dsec-mount --at`.
#pragma once

#include <string>
#include <vector>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::mount {

/// The kernel's limit on overlay lower layers.
constexpr size_t kMaxLowers = 500;

/// The error for a stack of `layers` layers past kMaxLowers: code too_many_layers, with
/// a hint to squash.
Error too_many_layers_error(size_t layers);

struct OverlaySpec {
    std::vector<std::string> lowerdirs;  // top first
    std::string upper;                   // empty: a read-only overlay of the lowers
    std::string work;
    bool volatile_upper = false;         // "volatile": no syncs, for throwaway uppers
};

/// Creates a detached overlay mount (fsopen/fsconfig/fsmount) and returns its fd;
/// nothing is attached until attach(). Errors: too_many_layers (suggests squashing),
/// the failing fsconfig key with the kernel's message.
///
/// Options are chosen for uppers and layers that a sandbox (an agent) may have written:
/// metacopy=off (a crafted metacopy file could expose a lower file's data under the
/// upper's permissions), redirect_dir=nofollow (redirect xattrs are neither made nor
/// followed, so nothing can point past a whiteout; renaming a lower directory gives
/// EXDEV and tools fall back to copying), index=off (no inode index that ties an upper
/// to one set of lowers) and trusted.* xattrs (not userxattr, whose user.overlay.*
/// names a layer's content could carry). The mount is nodev; with no upper it is
/// read-only, and a single read-only lower is a read-only bind of that lower.
Result<Fd> make_overlay(const OverlaySpec& spec);

/// Attaches a detached mount at `target` (move_mount). Errors: io with the path.
Status attach(const Fd& mount, const std::string& target);

/// Takes down the overlay (or read-only bind) that `make_overlay` + `attach` put at
/// `target`. Errors: bad_input when `target` is not a mount point or not an overlay or
/// erofs mount (nothing else is touched), busy when something still uses it.
Status detach(const std::string& target);

}  // namespace dsec::mount
