// A filesystem context of the new mount API (fsopen/fsconfig/fsmount) that turns each
// failing step into an Error carrying the kernel's own message from the context's log.
#pragma once

#include <string>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::mount {

/// fsconfig string values longer than this are refused by the kernel (EINVAL).
constexpr size_t kMaxFsconfigString = 255;

/// True when `path` is the root of a mount (statx STATX_ATTR_MOUNT_ROOT); false when it
/// is not, or does not exist.
bool is_mount_root(const std::string& path);

/// The filesystem magic (statfs f_type) of the filesystem holding `path`, 0 on error.
long fs_magic(const std::string& path);

class FsContext {
public:
    /// fsopen(type). Errors: unsupported when the kernel lacks the filesystem.
    static Result<FsContext> open(const std::string& type);

    /// FSCONFIG_SET_STRING. Errors: mount_failed naming the key, with the kernel's message.
    Status set_string(const std::string& key, const std::string& value);
    /// FSCONFIG_SET_FLAG.
    Status set_flag(const std::string& key);
    /// A directory parameter: the path as a string when it fits, otherwise an O_PATH fd
    /// (FSCONFIG_SET_FD), so long paths work where the filesystem takes fds.
    Status set_dir(const std::string& key, const std::string& path);
    /// FSCONFIG_CMD_CREATE then fsmount with `attrs` (MOUNT_ATTR_*): a detached mount
    /// that vanishes when its fd is closed unless attached.
    Result<Fd> mount(unsigned attrs);

private:
    FsContext(Fd fd, std::string type) : fd_(std::move(fd)), type_(std::move(type)) {}
    Error failure(const std::string& op, const std::string& what);
    Fd fd_;
    std::string type_;
};

}  // namespace dsec::mount
