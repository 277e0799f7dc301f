// Read-only loop devices for images on filesystems that cannot back a mount directly
// (EROFS mounts a regular file itself only when its filesystem can read pages into the
// page cache, which tmpfs cannot: there it says "Block device required").
#pragma once

#include <string>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::sys {

/// A free loop device bound read-only to the file open as `fd`, with autoclear: the
/// device lets go of the file when its last user (the mount made from it) goes away,
/// so nothing is left to detach. Returns the device's path and an open fd on it (keep
/// it open until the mount holds the device). Errors: io (no loop support, none free).
struct Loop {
    std::string path;
    Fd fd;
};
Result<Loop> attach_loop(int fd);

}  // namespace dsec::sys
