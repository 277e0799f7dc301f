// Reading a tree as a copy stream, one descriptor at a time: every step is an openat or
// fstatat relative to the directory above it with O_NOFOLLOW / AT_SYMLINK_NOFOLLOW, so a
// symlink is carried as a symlink and never followed, even one put in place while the
// walk runs.
#pragma once

#include <string>

#include "dsec/copy/guard.h"
#include "dsec/copy/place.h"

namespace dsec::copy {

/// Feeds `from` (and, for a directory, everything below it, in name order) to `guard`,
/// `from` itself named `top`. Regular files are opened O_NONBLOCK | O_NOFOLLOW and
/// checked again with fstat, so a FIFO or device put in a file's place is skipped, never
/// read; at most the size that fstat gave is read (a file that shrinks is padded with
/// zeros), so a file that keeps growing cannot push a copy past its caps or keep it
/// running. Files with several links inside the tree become hard links. Devices, FIFOs
/// and sockets are skipped, so are entries that vanish or change type under the walk,
/// and mount points below `from` (the walk stays on one filesystem, as cp -x does).
/// Errors: not_found (no `from`), io (a read or stat that fails), and what the guard says.
Status walk(const Place& from, const std::string& top, Guard& guard);

}  // namespace dsec::copy
