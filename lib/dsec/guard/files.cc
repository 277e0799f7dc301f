// Mounting a policy's file rules from a child that joined the sandbox's user and mount
// namespaces. The child may be forked from a multi-threaded dsec-run: it only makes raw
// system calls on data prepared before the fork.
#include "dsec/guard/files.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "dsec/ns/confine.h"
#include "dsec/ns/confinement.h"

namespace dsec::guard {

namespace {

constexpr std::pair<FileStep, std::string_view> kStepNames[] = {
    {FileStep::read_only, "read_only"}, {FileStep::read_write, "read_write"}, {FileStep::hide, "hidden"}};

size_t depth(const std::string& path) { return path == "/" ? 0 : size_t(std::count(path.begin(), path.end(), '/')); }

[[noreturn]] void die(int report_fd, const char* op, const char* path) {
    dsec_send_report(report_fd, errno ? errno : EIO, 0, op, path);
    ::_exit(1);
}

// One tmpfs (one superblock, whatever the number of hidden paths) holding an empty
// directory "d" and an empty file "f", read-only once they exist.
int make_covers(int report_fd) {
    int fs = int(::syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
    if (fs < 0) die(report_fd, "fsopen", "tmpfs");
    if (::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) < 0 ||
        ::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "nr_inodes", "4", 0) < 0 ||
        ::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0555", 0) < 0 ||
        ::syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0)
        die(report_fd, "fsconfig", "tmpfs");
    int mnt = int(::syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
    if (mnt < 0) die(report_fd, "fsmount", "tmpfs");
    ::close(fs);
    if (::mkdirat(mnt, "d", 0555) < 0) die(report_fd, "mkdir", "empty directory");
    int f = ::openat(mnt, "f", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
    if (f < 0) die(report_fd, "create", "empty file");
    ::close(f);
    struct mount_attr attr = {};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    if (::syscall(SYS_mount_setattr, mnt, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
        die(report_fd, "mount_setattr", "empty tmpfs");
    return mnt;
}

// Attaches a clone of `what` (a path under `dirfd`) at `path`.
void attach_clone(int dirfd, const char* what, unsigned extra, const struct mount_attr* attr, const char* path,
                  int report_fd) {
    int fd = int(::syscall(SYS_open_tree, dirfd, what, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | extra));
    if (fd < 0) die(report_fd, "open_tree", path);
    if (attr && ::syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, attr, sizeof *attr) < 0)
        die(report_fd, "mount_setattr", path);
    if (::syscall(SYS_move_mount, fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        die(report_fd, "move_mount", path);
    ::close(fd);
}

[[noreturn]] void apply_in_child(const std::vector<std::pair<FileStep, std::string>>& plan, int report_fd) {
    int covers = -1;
    for (const auto& [step, path] : plan) {
        const char* p = path.c_str();
        struct statx stx;
        if (::statx(AT_FDCWD, p, 0, STATX_TYPE, &stx) < 0) {
            if (errno == ENOENT && step == FileStep::hide) continue;
            die(report_fd, "statx", p);
        }
        if (step == FileStep::hide) {
            if (covers < 0) covers = make_covers(report_fd);
            attach_clone(covers, S_ISDIR(stx.stx_mode) ? "d" : "f", 0, nullptr, p, report_fd);
            continue;
        }
        struct mount_attr attr = {};
        (step == FileStep::read_only ? attr.attr_set : attr.attr_clr) = MOUNT_ATTR_RDONLY;
        // A mount's own root ("/") changes in place: a bind stacked over the root would
        // not be the root that the init and later joins see.
        if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) {
            if (::syscall(SYS_mount_setattr, AT_FDCWD, p, 0, &attr, sizeof attr) < 0)
                die(report_fd, "mount_setattr", p);
            continue;
        }
        // Recursive: what is mounted beneath (a hidden path's cover, /proc) comes along.
        attach_clone(AT_FDCWD, p, AT_RECURSIVE, &attr, p, report_fd);
    }
    dsec_send_report(report_fd, 0, 0, "ok", "");
    ::_exit(0);
}

}  // namespace

std::string_view file_step_name(FileStep step) {
    for (auto [value, name] : kStepNames)
        if (value == step) return name;
    return "?";
}

std::vector<std::pair<FileStep, std::string>> file_plan(const FileRules& rules) {
    std::vector<std::pair<FileStep, std::string>> plan;
    for (auto& p : rules.read_only) plan.emplace_back(FileStep::read_only, p);
    for (auto& p : rules.read_write) plan.emplace_back(FileStep::read_write, p);
    std::stable_sort(plan.begin(), plan.end(), [](const auto& a, const auto& b) {
        return depth(a.second) != depth(b.second) ? depth(a.second) < depth(b.second) : a.first < b.first;
    });
    for (auto& p : rules.hidden) plan.emplace_back(FileStep::hide, p);
    return plan;
}

Status apply_file_rules(const ns::JoinSpec& join, const FileRules& rules) {
    if (rules.empty()) return {};
    auto plan = file_plan(rules);
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    Fd rd(p[0]), wr(p[1]);
    ns::JoinSpec spec = join;
    spec.namespaces = CLONE_NEWNS;
    spec.cgroup_procs.clear();
    spec.keep_fds = {wr.get()};
    auto child = ns::spawn_inside(spec, [&] { apply_in_child(plan, wr.get()); });
    if (!child) return fail(child.error());
    wr.reset();
    auto reported = ns::read_report(rd.get(), "applying the policy's file rules");
    while (::waitpid(child->pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (!reported) return fail(reported.error());
    return {};
}

}  // namespace dsec::guard
