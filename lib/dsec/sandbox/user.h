// --user by name: looked up in the sandbox's own /etc/passwd and /etc/group.
#pragma once

#include <optional>
#include <string>

#include "dsec/sys/error.h"
#include "dsec/sys/parse.h"

namespace dsec::sandbox {

/// The uid and gid a --user value names inside the sandbox whose init is `init_pid`:
/// numbers as they are; a name from the sandbox's /etc/passwd (its gid with it, unless
/// a group is given), a group from its /etc/group. The files are read through the init's
/// root without following anything out of it, and only if they are regular files of at
/// most 4 MiB. Errors: usage (an unknown name), not_found (no such file in the image).
Result<parse::User> resolve_user(const std::string& text, int init_pid);

/// One regular file of at most 4 MiB of the sandbox whose init is `init_pid`, read from
/// the host through the init's root: symlinks resolve inside it, magic links are
/// refused, a FIFO or device is refused before it is opened for reading. Errors: the
/// failing open (ENOENT when absent), bad_input for what is not such a file.
Result<std::string> read_inside(int init_pid, const char* path);

/// The id of `name` in a passwd- or group-format text (field 3), and for passwd the
/// gid (field 4); nothing when absent. Split out for the unit tests.
struct Entry {
    unsigned id = 0, gid = 0;
};
std::optional<Entry> find_entry(const std::string& text, const std::string& name);

}  // namespace dsec::sandbox
