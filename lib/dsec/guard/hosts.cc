// The sandbox's /etc/hosts: its text, and the bind that puts the host's file over it
// from a helper in the sandbox's mount namespace (in_mount_ns.h).
#include "dsec/guard/hosts.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

#include "dsec/guard/in_mount_ns.h"
#include "dsec/ns/confine.h"
#include "dsec/ns/idrange.h"
#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"

namespace dsec::guard {

namespace {
constexpr const char* kTarget = "/etc/hosts";

// A hosts line without the names of `resolved` ("" when none is left, or the line
// unchanged when it names none of them).
std::string without_names(const std::string& line, const Resolved& resolved) {
    auto hash = line.find('#');
    std::istringstream fields(line.substr(0, hash));
    std::string addr, name, kept;
    if (!(fields >> addr)) return line;
    bool dropped = false, any = false;
    while (fields >> name) {
        if (resolved.contains(name)) {
            dropped = true;
            continue;
        }
        kept += " " + name;
        any = true;
    }
    if (!dropped) return line;
    return any ? addr + kept : "";
}

[[noreturn]] void die(int report_fd, const char* op) {
    dsec_send_report(report_fd, errno ? errno : EIO, 0, op, kTarget);
    ::_exit(1);
}

struct BindArgs {
    int tree;
    uid_t root_uid;  // the host ids of root inside, owner of what the helper makes
    gid_t root_gid;
};

// In the sandbox's mount namespace: the bind over a regular /etc/hosts (not a link).
// An image without one gets an empty file (and /etc, if it has none) made here as root
// inside would make it (the overlay refuses owners its user namespace does not map):
// a bind needs something to cover. Neither /etc nor the file is followed if a link.
void bind_work(void* p, int report_fd) {
    const auto* a = static_cast<const BindArgs*>(p);
    ::setfsgid(a->root_gid);
    ::setfsuid(a->root_uid);
    int etc = ::open("/etc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (etc < 0 && errno == ENOENT) {
        if (::mkdir("/etc", 0755) < 0 && errno != EEXIST) die(report_fd, "making /etc");
        etc = ::open("/etc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (etc < 0) die(report_fd, "open /etc");
    struct statx stx;
    if (::statx(etc, "hosts", AT_SYMLINK_NOFOLLOW, STATX_TYPE, &stx) < 0) {
        if (errno != ENOENT) die(report_fd, "statx");
        int f = ::openat(etc, "hosts", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (f < 0) die(report_fd, "making /etc/hosts");
        ::close(f);
    } else if (!S_ISREG(stx.stx_mode)) {
        errno = EINVAL;
        die(report_fd, "not a regular file");
    }
    ::setfsuid(0);
    ::setfsgid(0);
    if (::syscall(SYS_move_mount, a->tree, "", etc, "hosts", MOVE_MOUNT_F_EMPTY_PATH) < 0) die(report_fd, "move_mount");
    dsec_send_report(report_fd, 0, 0, "ok", "");
    ::_exit(0);
}
// The host uid and gid of root in the user namespace of `pid` (0 when root is not mapped
// there: a sandbox without a user namespace of its own).
Result<std::pair<uid_t, gid_t>> root_ids(int pid) {
    auto uids = ns::read_id_map(pid, "uid_map");
    if (!uids) return fail(uids.error());
    auto gids = ns::read_id_map(pid, "gid_map");
    if (!gids) return fail(gids.error());
    return std::pair<uid_t, gid_t>{uids->outside(0).value_or(0), gids->outside(0).value_or(0)};
}
}  // namespace

std::string hosts_text(std::string_view base, const Resolved& resolved, const std::string& when) {
    std::string out;
    std::istringstream in{std::string(base)};
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with(kHostsMarker)) break;
        std::string kept = without_names(line, resolved);
        if (!kept.empty() || line.empty()) out += kept + "\n";
    }
    out += std::string(kHostsMarker) + " at " + when + " (read-only)\n";
    for (const auto& [name, addresses] : resolved)
        for (const auto& a : addresses) out += a + " " + name + "\n";
    return out;
}

Status bind_hosts(int init_pid, unsigned long long init_start, const std::string& host_file) {
    Fd tree(int(::syscall(SYS_open_tree, AT_FDCWD, host_file.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)));
    if (!tree) return fail(sys_error("open_tree", host_file));
    struct mount_attr attr = {};
    attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
    if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
        return fail(sys_error("mount_setattr", host_file));
    auto root = root_ids(init_pid);
    if (!root) return fail(root.error());
    BindArgs args{tree.get(), root->first, root->second};
    return in_mount_namespace(init_pid, init_start, bind_work, &args, "binding the policy's names over /etc/hosts");
}

}  // namespace dsec::guard
