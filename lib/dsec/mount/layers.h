// Layer mounts: each layer image mounted once per host, read-only and file-backed (the
// image file is the mount source, no loop device), at $DSEC_RUN/layers/<hex digest>.
//
// Propagation: $DSEC_RUN/layers is made a private mount (a bind of itself when it is
// not a mount point yet). Sandboxes' mount namespaces are created after the layers they
// use are mounted, so their copy of the mount table already holds those layer mounts;
// nothing needs to propagate. Private keeps the host's later layer mounts out of every
// existing sandbox namespace (which would otherwise grow by one mount per layer per
// sandbox) and keeps a host-side `release` from reaching into them.
#pragma once

#include <string>
#include <vector>

#include "dsec/sys/paths.h"
#include "dsec/layer/store.h"
#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::mount {

/// $DSEC_RUN/layers.
std::string layers_dir(const Paths& paths);
/// $DSEC_RUN/layers/<hex>: where the layer with this digest ("sha256:<hex>" or hex) is mounted.
std::string layer_mountpoint(const Paths& paths, const std::string& digest);
/// $DSEC_RUN/locks/layer-<hex>.lock: held while a layer is mounted or released.
std::string layer_lock_path(const Paths& paths, const std::string& digest);

/// True when `path` lies below $DSEC_RUN/layers (links resolved): a layer mount, which
/// only release takes down.
bool in_layers_dir(const Paths& paths, const std::string& path);

/// True when `path` is the root of an erofs mount. Errors: none; a missing path is false.
bool is_layer_mount(const std::string& path);

/// Creates $DSEC_RUN/layers and $DSEC_RUN/locks and makes $DSEC_RUN/layers a private
/// mount (see above). Errors: io, permission (not root).
Status prepare_layers_dir(const Paths& paths);

/// Mounts the EROFS image at `image` as a detached mount: file-backed, directio,
/// read-only, nodev, nosuid. Errors: mount_failed with the kernel's message (a
/// corrupt or truncated superblock), unsupported (no EROFS in the kernel).
Result<Fd> mount_image(const std::string& image);

/// Mounts `layer` at its mountpoint unless it is mounted already, under the layer's
/// lock. Checks first that the image exists and has the size its metadata records,
/// and with `verify` its digest. Errors: not_found (image missing), corrupt (wrong
/// size or digest), mount_failed.
Result<std::string> mount_layer(const Paths& paths, const layer::Store& store, const layer::Layer& layer,
                                bool verify);

/// A layer mounted on this host, as the mount table says.
struct MountedLayer {
    std::string digest;  // "sha256:<hex>"
    std::string path;    // the mountpoint
    std::string image;   // the mount source: the image file
};

/// The layers mounted under $DSEC_RUN/layers, sorted by digest. Errors: io.
Result<std::vector<MountedLayer>> mounted_layers(const Paths& paths);

/// Unmounts one layer (under its lock) and removes its mountpoint. Not mounted: a no-op.
/// The caller checks that no live sandbox uses it. Errors: busy (still in use on the
/// host, e.g. a shell inside it), io.
Status unmount_layer(const Paths& paths, const std::string& digest);

}  // namespace dsec::mount
