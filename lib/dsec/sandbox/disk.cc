#include "dsec/sandbox/disk.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dsec/sys/fs.h"

namespace dsec::sandbox {

Result<Upper> prepare_upper(const mount::Rootfs& rootfs, uint64_t disk) {
    Upper u;
    if (disk == 0) {
        if (rootfs.upper.empty() || !fs::exists(rootfs.upper) || !fs::exists(rootfs.work))
            return fail(make_error(Code::not_found, "the rootfs's upper or work directory is missing", rootfs.upper));
        u.dir = fs::dirname(rootfs.upper);
        if (rootfs.upper != u.dir + "/upper" || rootfs.work != u.dir + "/work")
            return fail(make_error(Code::bad_input, "the rootfs's upper and work must be DIR/upper and DIR/work",
                                   rootfs.upper));
        return u;
    }
    Fd fsfd(int(::syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC)));
    if (!fsfd) return fail(sys_error("fsopen", "tmpfs"));
    std::string size = std::to_string(disk);
    if (::syscall(SYS_fsconfig, fsfd.get(), FSCONFIG_SET_STRING, "size", size.c_str(), 0) < 0 ||
        ::syscall(SYS_fsconfig, fsfd.get(), FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
        ::syscall(SYS_fsconfig, fsfd.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0)
        return fail(sys_error("fsconfig", "tmpfs size=" + size));
    u.tmpfs.reset(int(::syscall(SYS_fsmount, fsfd.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV)));
    if (!u.tmpfs) return fail(sys_error("fsmount", "tmpfs"));
    for (const char* d : {"upper", "work"})
        if (::mkdirat(u.tmpfs.get(), d, 0755) < 0) return fail(sys_error("mkdirat", d));
    return u;
}

uint64_t default_memory_upper_size() {
    long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return uint64_t(1) << 30;
    return uint64_t(pages) * uint64_t(page) / 2;
}

}  // namespace dsec::sandbox
