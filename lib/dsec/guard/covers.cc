#include "dsec/guard/covers.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "dsec/sys/fs.h"

namespace dsec::guard {

namespace {

// The covers are mounted when the directory is the root of a tmpfs holding both.
bool mounted(const std::string& dir) {
    struct statfs sfs;
    struct statx stx;
    if (::statfs(dir.c_str(), &sfs) < 0 || sfs.f_type != TMPFS_MAGIC) return false;
    if (::statx(AT_FDCWD, dir.c_str(), 0, STATX_TYPE, &stx) < 0 || !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
        return false;
    struct stat st;
    return ::stat((dir + "/d").c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::stat((dir + "/f").c_str(), &st) == 0 &&
           S_ISREG(st.st_mode);
}

Status mount_covers(const std::string& dir) {
    Fd fs(int(::syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC)));
    if (!fs) return fail(sys_error("fsopen", "tmpfs"));
    for (auto [key, value] : {std::pair{"size", "4k"}, std::pair{"nr_inodes", "4"}, std::pair{"mode", "0555"}})
        if (::syscall(SYS_fsconfig, fs.get(), FSCONFIG_SET_STRING, key, value, 0) < 0)
            return fail(sys_error("fsconfig", std::string("tmpfs ") + key));
    if (::syscall(SYS_fsconfig, fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0)
        return fail(sys_error("fsconfig", "tmpfs create"));
    Fd mnt(int(::syscall(SYS_fsmount, fs.get(), FSMOUNT_CLOEXEC,
                         MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)));
    if (!mnt) return fail(sys_error("fsmount", "tmpfs"));
    if (::mkdirat(mnt.get(), "d", 0555) < 0) return fail(sys_error("mkdir", dir + "/d"));
    Fd f(::openat(mnt.get(), "f", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444));
    if (!f) return fail(sys_error("create", dir + "/f"));
    f.reset();  // a file open for writing would keep the mount from going read-only
    struct mount_attr attr = {};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    if (::syscall(SYS_mount_setattr, mnt.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
        return fail(sys_error("mount_setattr", dir));
    if (::mkdir(dir.c_str(), 0755) < 0 && errno != EEXIST) return fail(sys_error("mkdir", dir));
    if (::syscall(SYS_move_mount, mnt.get(), "", AT_FDCWD, dir.c_str(), MOVE_MOUNT_F_EMPTY_PATH) < 0)
        return fail(sys_error("move_mount", dir));
    return {};
}

}  // namespace

std::string covers_dir(const std::string& run_dir) { return run_dir + "/guard"; }

Result<Fd> open_covers(const std::string& run_dir) {
    std::string dir = covers_dir(run_dir);
    if (!mounted(dir)) {
        if (auto m = fs::mkdir_p(run_dir + "/locks", 0700); !m) return fail(m.error());
        auto held = fs::lock(run_dir + "/locks/guard.lock");
        if (!held) return fail(held.error());
        if (!mounted(dir))
            if (auto r = mount_covers(dir); !r) return fail(r.error());
    }
    Fd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return fail(sys_error("open", dir));
    return fd;
}

Result<Fd> clone_cover(int covers, bool dir) {
    Fd fd(int(::syscall(SYS_open_tree, covers, dir ? "d" : "f", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)));
    if (!fd) return fail(sys_error("open_tree", dir ? "empty directory" : "empty file"));
    return fd;
}

}  // namespace dsec::guard
