// Mounting a policy's file rules from a helper that joined the sandbox's mount namespace
// (in_mount_ns.h); the covers of hidden paths are cloned on the host beforehand.
#include "dsec/guard/files.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "dsec/guard/covers.h"
#include "dsec/guard/in_mount_ns.h"
#include "dsec/ns/confine.h"

namespace dsec::guard {

namespace {

constexpr std::pair<FileStep, std::string_view> kStepNames[] = {
    {FileStep::read_only, "read_only"}, {FileStep::read_write, "read_write"}, {FileStep::hide, "hidden"}};

size_t depth(const std::string& path) { return path == "/" ? 0 : size_t(std::count(path.begin(), path.end(), '/')); }

[[noreturn]] void die(int report_fd, const char* op, const char* path) {
    dsec_send_report(report_fd, errno ? errno : EIO, 0, op, path);
    ::_exit(1);
}

// No symlink, at the end of a rule's path or on the way, magic links included: the
// image decides what is a symlink, and may be an agent's (a snapshot). Followed, a link
// would let it steer a rule: make "/work" lead to the grader, "/proc/sys" or "/" under
// read_write, or a hidden path or a read_only one to the grader's files.
constexpr uint64_t kRuleResolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;

// Opens a rule's path inside the sandbox's root (this helper's root is the sandbox's
// mount namespace's), for the mount calls to act on that object and no other; from the
// host, beneath `root` (the init's root) with RESOLVE_IN_ROOT. -1 with errno set (ELOOP
// for a symlink).
int open_rule_path(const char* path, int root = AT_FDCWD) {
    struct open_how how = {};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = kRuleResolve | (root == AT_FDCWD ? 0 : RESOLVE_IN_ROOT);
    return int(::syscall(SYS_openat2, root, path, &how, sizeof how));
}

// Attaches the detached mount `fd` onto the object `at` (a descriptor of open_rule_path).
void attach(int fd, int at, const char* path, int report_fd) {
    if (::syscall(SYS_move_mount, fd, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        die(report_fd, "move_mount", path);
    ::close(fd);
}

// Attaches a clone of the tree at `at` onto itself, with `attr` applied.
void attach_clone(int at, const struct mount_attr* attr, const char* path, int report_fd) {
    int fd = int(::syscall(SYS_open_tree, at, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH));
    if (fd < 0) die(report_fd, "open_tree", path);
    if (::syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, attr, sizeof *attr) < 0)
        die(report_fd, "mount_setattr", path);
    attach(fd, at, path, report_fd);
}

// The cover of each hidden path, cloned on the host: an empty directory or file as the
// path is one, none where it does not exist.
struct Cover {
    Fd tree;
    bool dir = false;
};
using Covers = std::vector<Cover>;

// One cover per hidden path, of the kind the sandbox sees there, looked up from the host
// through the init's root, with no symlink on the way (as the helper looks it up). Only
// what will be attached is cloned: a clone closed unattached is unmounted, and that waits
// for an expedited RCU grace period (0.1 ms on idle CPUs, up to 20 ms on busy ones).
Result<Covers> clone_covers(int init_pid, unsigned long long init_start, const std::vector<std::string>& hidden,
                            const std::string& run_dir) {
    Covers covers(hidden.size());
    if (hidden.empty()) return covers;
    auto host = open_covers(run_dir);
    if (!host) return fail(host.error());
    auto root = open_init_root(init_pid, init_start);
    if (!root) return fail(root.error());
    for (size_t i = 0; i < hidden.size(); i++) {
        Fd path(open_rule_path(hidden[i].c_str(), root->get()));
        if (!path && errno == ENOENT) continue;
        if (!path && errno == ELOOP)
            return fail(make_error(Code::bad_input, "a policy path must not be or pass through a symlink", hidden[i]));
        struct stat st;
        if (!path || ::fstat(path.get(), &st) < 0) return fail(sys_error("openat2", hidden[i]));
        covers[i].dir = S_ISDIR(st.st_mode);
        auto c = clone_cover(host->get(), covers[i].dir);
        if (!c) return fail(c.error());
        covers[i].tree = std::move(*c);
    }
    return covers;
}

// A hidden file that has a hard link the policy does not hide would still show through
// that link: refused, unless every link is hidden too (counted by device and inode; the
// paths are distinct and have no symlink in them, so each names an entry of its own).
void check_links(const std::vector<std::pair<FileStep, std::string>>& plan, std::vector<struct statx>& seen,
                 int report_fd) {
    size_t n = 0;
    for (const auto& [step, path] : plan) {
        if (step != FileStep::hide) continue;
        struct statx& s = seen[n++];
        s.stx_nlink = 0;
        int at = open_rule_path(path.c_str());  // a symlink is refused by the caller
        if (at < 0) continue;
        if (::statx(at, "", AT_EMPTY_PATH, STATX_TYPE | STATX_INO | STATX_NLINK, &s) < 0) s.stx_nlink = 0;
        ::close(at);
    }
    for (size_t i = 0; i < n; i++) {
        if (seen[i].stx_nlink <= 1 || S_ISDIR(seen[i].stx_mode)) continue;
        uint32_t hidden_links = 0;
        for (size_t j = 0; j < n; j++)
            hidden_links += seen[j].stx_nlink && seen[j].stx_ino == seen[i].stx_ino &&
                            seen[j].stx_dev_major == seen[i].stx_dev_major &&
                            seen[j].stx_dev_minor == seen[i].stx_dev_minor;
        if (hidden_links < seen[i].stx_nlink) {
            errno = EMLINK;
            size_t k = 0;
            for (const auto& [step, path] : plan)
                if (step == FileStep::hide && k++ == i) die(report_fd, "hidden file has other hard links", path.c_str());
        }
    }
}

[[noreturn]] void apply_in_child(const std::vector<std::pair<FileStep, std::string>>& plan, const Covers& covers,
                                 std::vector<struct statx>& seen, int report_fd) {
    check_links(plan, seen, report_fd);
    size_t hidden = 0;
    for (const auto& [step, path] : plan) {
        const char* p = path.c_str();
        int at = open_rule_path(p);
        if (at < 0) {
            if (errno == ENOENT && step == FileStep::hide) {
                hidden++;
                continue;
            }
            if (errno == ELOOP) die(report_fd, "a policy path must not be or pass through a symlink", p);
            die(report_fd, "open", p);
        }
        struct statx stx;
        if (::statx(at, "", AT_EMPTY_PATH, STATX_TYPE, &stx) < 0) die(report_fd, "statx", p);
        if (step == FileStep::hide) {
            // Looked up from the host a moment before, with nothing run inside since.
            const Cover& cover = covers[hidden++];
            if (!cover.tree || cover.dir != S_ISDIR(stx.stx_mode)) {
                errno = ESTALE;
                die(report_fd, "hidden path changed since the host looked it up", p);
            }
            attach(cover.tree.get(), at, p, report_fd);
            ::close(at);
            continue;
        }
        struct mount_attr attr = {};
        (step == FileStep::read_only ? attr.attr_set : attr.attr_clr) = MOUNT_ATTR_RDONLY;
        // A mount's own root ("/") changes in place: a bind stacked over the root would
        // not be the root that the init and later joins see.
        if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) {
            if (::syscall(SYS_mount_setattr, at, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
                die(report_fd, "mount_setattr", p);
        } else {
            // Recursive: what is mounted beneath (/proc under "/", say) comes along.
            attach_clone(at, &attr, p, report_fd);
        }
        ::close(at);
    }
    dsec_send_report(report_fd, 0, 0, "ok", "");
    ::_exit(0);
}

struct Work {
    const std::vector<std::pair<FileStep, std::string>>* plan;
    const Covers* covers;
    std::vector<struct statx>* seen;
};

void apply_work(void* p, int report_fd) {
    auto* w = static_cast<Work*>(p);
    apply_in_child(*w->plan, *w->covers, *w->seen, report_fd);
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

Status apply_file_rules(int init_pid, unsigned long long init_start, const FileRules& rules,
                        const std::string& run_dir) {
    if (rules.empty()) return {};
    auto plan = file_plan(rules);
    auto covers = clone_covers(init_pid, init_start, rules.hidden, run_dir);
    if (!covers) return fail(covers.error());
    // Written by the helper, which shares our memory: no allocation after the clone.
    std::vector<struct statx> seen(rules.hidden.size());
    Work work{&plan, &*covers, &seen};
    return in_mount_namespace(init_pid, init_start, apply_work, &work, "applying the policy's file rules");
}

}  // namespace dsec::guard
