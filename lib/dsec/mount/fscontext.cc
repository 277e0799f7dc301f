#include "dsec/mount/fscontext.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <cerrno>

namespace dsec::mount {

bool is_mount_root(const std::string& path) {
    struct statx stx = {};
    if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, 0, &stx) < 0) return false;
    return (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

long fs_magic(const std::string& path) {
    struct statfs sfs = {};
    if (::statfs(path.c_str(), &sfs) < 0) return 0;
    return long(sfs.f_type);
}

Result<FsContext> FsContext::open(const std::string& type) {
    int fd = ::fsopen(type.c_str(), FSOPEN_CLOEXEC);
    if (fd < 0) {
        Error e = sys_error("fsopen", type);
        if (e.err == ENODEV) e.code = Code::unsupported;
        return fail(std::move(e));
    }
    return FsContext(Fd(fd), type);
}

// The kernel explains most refusals in the context's log ("e overlay: ..." lines); keep
// them, since errno alone (EINVAL) says little.
Error FsContext::failure(const std::string& op, const std::string& what) {
    Error e = sys_error(op, what);
    std::string log;
    char buf[512];
    ssize_t n;
    while ((n = ::read(fd_.get(), buf, sizeof buf - 1)) > 0) {
        std::string line(buf, size_t(n));
        while (!line.empty() && line.back() == '\n') line.pop_back();
        if (line.size() > 2 && line[1] == ' ') line = line.substr(2);  // drop "e "/"w "/"i "
        log += (log.empty() ? "" : "; ") + line;
    }
    if (e.code == Code::io) e.code = Code::mount_failed;
    return std::move(e).context(type_ + (log.empty() ? "" : ": " + log));
}

Status FsContext::set_string(const std::string& key, const std::string& value) {
    if (::fsconfig(fd_.get(), FSCONFIG_SET_STRING, key.c_str(), value.c_str(), 0) < 0)
        return fail(failure("fsconfig", key + "=" + value));
    return {};
}

Status FsContext::set_flag(const std::string& key) {
    if (::fsconfig(fd_.get(), FSCONFIG_SET_FLAG, key.c_str(), nullptr, 0) < 0) return fail(failure("fsconfig", key));
    return {};
}

Status FsContext::set_dir(const std::string& key, const std::string& path) {
    if (path.size() <= kMaxFsconfigString) return set_string(key, path);
    Fd dir(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return fail(sys_error("open", path));
    if (::fsconfig(fd_.get(), FSCONFIG_SET_FD, key.c_str(), nullptr, dir.get()) < 0)
        return fail(failure("fsconfig", key + "=" + path + " (by fd: the path is over 255 bytes)"));
    return {};
}

Result<Fd> FsContext::mount(unsigned attrs) {
    if (::fsconfig(fd_.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0) return fail(failure("fsconfig", "create"));
    int m = ::fsmount(fd_.get(), FSMOUNT_CLOEXEC, attrs);
    if (m < 0) return fail(failure("fsmount", ""));
    return Fd(m);
}

}  // namespace dsec::mount
