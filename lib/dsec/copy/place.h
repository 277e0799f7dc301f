// Where a copy starts and where it lands. Inside a sandbox, every path is resolved with
// openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) relative to a descriptor of the
// sandbox's root, opened once: an absolute symlink means the sandbox's "/", ".." stops
// there, and /proc's magic links (/proc/1/root, /proc/self/fd/N) are refused, so no path
// a sandbox controls can lead out of it. On the host, the paths are the user's own and
// resolve as usual, magic links aside.
#pragma once

#include <fcntl.h>

#include <string>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::copy {

/// What paths are resolved against. `fd` is not owned.
struct Root {
    int fd = AT_FDCWD;
    bool jailed = false;  // RESOLVE_IN_ROOT: `fd` is "/" for every path
    std::string label;    // put before paths in messages ("ID:" for a sandbox)
};

/// Opens `path` below `root` with `flags` (O_CLOEXEC added). Errors: the errno of openat2.
Result<Fd> open_at(const Root& root, const std::string& path, int flags);

/// A name in a directory: the directory's fd and one component.
struct Place {
    Fd dir;
    std::string name;
    std::string dir_path;  // the directory, for messages (with the root's label)
};

/// Where a copy of something called `name` lands, as cp -a decides: inside `dst` when
/// that is an existing directory, else as `dst` itself in its parent. `follow_last`:
/// a symlink at `dst` leads to where it points (inside a sandbox, within the sandbox);
/// false: a symlink there is refused (on the host, where such a link may have come out
/// of a sandbox). Errors: not_found (no parent directory), bad_input (that symlink, or
/// no usable name: "/", ".", "..").
Result<Place> landing(const Root& root, const std::string& dst, const std::string& name, bool follow_last);

/// The existing directory `dst`, for a stream that brings its own names (a tar on
/// stdin). Errors: not_found, bad_input (not a directory).
Result<Fd> landing_dir(const Root& root, const std::string& dst);

/// What a copy reads: `src`'s parent directory and last component, which is never
/// followed when it is a symlink. "/" gives the root itself as name ".". On the host a
/// last component "." or ".." is resolved first; inside a sandbox it is refused.
/// Errors: not_found, bad_input.
Result<Place> source(const Root& root, const std::string& src);

/// The last component of a path, trailing slashes ignored ("a/b/" -> "b", "/" -> "").
std::string basename_of(std::string path);

/// True for a name that can stand as one path component (not "", ".", "..", no '/').
bool plain_name(const std::string& name);

}  // namespace dsec::copy
