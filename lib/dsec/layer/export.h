// Writing a layer's tree back out as a zstd-compressed tar stream, read straight from
// the EROFS image through a detached, read-only, file-backed mount (fsopen/fsmount:
// never attached anywhere, gone when its fd closes).
#pragma once

#include <string>

#include "dsec/sys/error.h"

namespace dsec::layer {

/// Writes every entry of the EROFS image `image` to `out_fd` as a pax tar compressed
/// with zstd at `level`. Deterministic: entries in byte order of their paths, mtimes 0,
/// numeric owners only, hard links kept as hard links. Overlay whiteouts (0/0 character
/// devices) are written as such and xattrs (trusted.overlay.opaque included) as pax
/// SCHILY.xattr records, so importing the stream gives back the same tree.
/// Errors: permission (mounting needs CAP_SYS_ADMIN), io, usage (bad level).
Status export_image(const std::string& image, int out_fd, int level);

}  // namespace dsec::layer
