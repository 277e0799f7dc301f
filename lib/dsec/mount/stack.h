// From an ordered list of layers to a sandbox root: every layer mounted (once per host),
// a fresh upper and work directory, and the `rootfs` record that dsec-run assembles.
#pragma once

#include <string>
#include <vector>

#include "dsec/sys/paths.h"
#include "dsec/layer/store.h"
#include "dsec/mount/rootfs.h"
#include "dsec/sys/error.h"
#include "dsec/sys/id.h"

namespace dsec::mount {

/// Mounts (if not yet mounted) each layer and returns a rootfs for them: layers base first,
/// lowerdirs top first, upper = <root>/sandboxes/<id>/upper, work = <root>/sandboxes/<id>/work
/// (created), config = the top layer's image config if any. `id` empty: a fresh random id
/// (16 hex chars). `verify`: check each layer's digest before its first mount.
/// Errors: bad_input (no layers, bad id), too_many_layers (more than kMaxLowers), and
/// those of ensure_mounted.
Result<Rootfs> make_rootfs(const Paths& paths, const std::vector<layer::Layer>& base_first,
                           std::string id, bool verify);

/// The part of make_rootfs without a sandbox: mounts each layer and fills layers,
/// lowerdirs and config, leaving id, upper and work empty (for read-only views).
/// Errors: as make_rootfs.
Result<Rootfs> mount_stack(const Paths& paths, const std::vector<layer::Layer>& base_first, bool verify);

/// Mounts one layer at <run>/layers/<hex> if it is not mounted yet; returns the path.
/// Errors: not_found (image missing), corrupt (size or, with `verify`, digest does not
/// match), mount_failed (the kernel refused the image, with its message).
Result<std::string> ensure_mounted(const Paths& paths, const layer::Store& store,
                                   const layer::Layer& layer, bool verify);

using dsec::check_id;

/// <root>/sandboxes/<id>: a sandbox's upper and work directories live below it.
std::string sandbox_dir(const Paths& paths, const std::string& id);

}  // namespace dsec::mount
