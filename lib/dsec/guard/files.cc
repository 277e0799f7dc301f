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

// Opens a rule's path inside the sandbox's root (this helper's root is the sandbox's
// mount namespace's), for the mount calls to act on that object and no other: symlinks
// are followed for hidden and read_only rules (what a link leads to is hidden or made
// read-only, never left open under its own name), never for read_write ones (a link in
// the image would choose what becomes writable: "/work" leading to "/opt/grader", to
// "/proc/sys" or to "/"), and magic links (/proc/PID/fd/N and the like) never. -1 with
// errno set (ELOOP for a symlink where none may be).
int open_rule_path(FileStep step, const char* path) {
    struct open_how how = {};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_NO_MAGICLINKS | (step == FileStep::read_write ? RESOLVE_NO_SYMLINKS : 0);
    return int(::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
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
// through the init's root (symlinks resolved inside it, as the helper's statx does). Only
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
        struct open_how how = {};
        how.flags = O_PATH | O_CLOEXEC;
        how.resolve = RESOLVE_IN_ROOT;
        Fd path(int(::syscall(SYS_openat2, root->get(), hidden[i].c_str(), &how, sizeof how)));
        if (!path && errno == ENOENT) continue;
        struct stat st;
        if (!path || ::fstat(path.get(), &st) < 0) return fail(sys_error("openat2", hidden[i]));
        covers[i].dir = S_ISDIR(st.st_mode);
        auto c = clone_cover(host->get(), covers[i].dir);
        if (!c) return fail(c.error());
        covers[i].tree = std::move(*c);
    }
    return covers;
}

// What check_links learns of one hidden path: the file it leads to, and the directory
// entry it names (its parent directory, and where its last component starts in the
// path), when that entry is the file's (not a symlink to it).
struct HiddenSeen {
    struct statx target = {};
    bool entry = false;
    uint64_t parent_ino = 0;
    uint32_t parent_major = 0, parent_minor = 0;
    size_t name_at = 0;
};

// A hidden file that has a hard link the policy does not hide would still show through
// that link: refused, unless every link is hidden too. Links are directory entries,
// counted once each: a hidden path is the entry named by its last component in its
// parent directory (symlinks on the way followed), so two paths through different
// symlinked directories to one entry count once, and a path whose last component is a
// symlink counts as no link of the file (its target is covered, but only the target's
// own entries count).
void check_links(const std::vector<std::pair<FileStep, std::string>>& plan, std::vector<HiddenSeen>& seen,
                 int report_fd) {
    size_t n = 0;
    for (const auto& [step, path] : plan) {
        if (step != FileStep::hide) continue;
        HiddenSeen& h = seen[n++];
        h = HiddenSeen{};
        if (::statx(AT_FDCWD, path.c_str(), 0, STATX_TYPE | STATX_INO | STATX_NLINK, &h.target) < 0) {
            h.target.stx_nlink = 0;
            continue;
        }
        // The parent directory (a copy of the path up to its last slash, on this stack).
        char parent[4096];
        size_t slash = path.rfind('/');
        if (slash == std::string::npos || slash >= sizeof parent) continue;
        path.copy(parent, slash == 0 ? 1 : slash);
        parent[slash == 0 ? 1 : slash] = 0;
        struct statx lst, pst;
        if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, STATX_TYPE, &lst) < 0 || S_ISLNK(lst.stx_mode)) continue;
        if (::statx(AT_FDCWD, parent, 0, STATX_INO, &pst) < 0) continue;
        h.entry = true;
        h.parent_ino = pst.stx_ino;
        h.parent_major = pst.stx_dev_major;
        h.parent_minor = pst.stx_dev_minor;
        h.name_at = slash + 1;
    }
    auto hidden_path = [&plan](size_t k) -> const std::string& {
        for (const auto& [step, path] : plan)
            if (step == FileStep::hide && k-- == 0) return path;
        return plan.back().second;
    };
    auto same_file = [](const struct statx& a, const struct statx& b) {
        return a.stx_ino == b.stx_ino && a.stx_dev_major == b.stx_dev_major && a.stx_dev_minor == b.stx_dev_minor;
    };
    auto same_entry = [&](size_t a, size_t b) {
        return seen[a].parent_ino == seen[b].parent_ino && seen[a].parent_major == seen[b].parent_major &&
               seen[a].parent_minor == seen[b].parent_minor &&
               hidden_path(a).compare(seen[a].name_at, std::string::npos, hidden_path(b), seen[b].name_at) == 0;
    };
    for (size_t i = 0; i < n; i++) {
        if (seen[i].target.stx_nlink <= 1 || S_ISDIR(seen[i].target.stx_mode)) continue;
        uint32_t hidden_links = 0;
        for (size_t j = 0; j < n; j++) {
            if (!seen[j].entry || !seen[j].target.stx_nlink || !same_file(seen[j].target, seen[i].target)) continue;
            bool counted = false;  // an entry reached by an earlier path already
            for (size_t k = 0; k < j && !counted; k++)
                counted = seen[k].entry && seen[k].target.stx_nlink && same_file(seen[k].target, seen[i].target) &&
                          same_entry(j, k);
            hidden_links += !counted;
        }
        if (hidden_links < seen[i].target.stx_nlink) {
            errno = EMLINK;
            die(report_fd, "hidden file has other hard links", hidden_path(i).c_str());
        }
    }
}

[[noreturn]] void apply_in_child(const std::vector<std::pair<FileStep, std::string>>& plan, const Covers& covers,
                                 std::vector<HiddenSeen>& seen, int report_fd) {
    check_links(plan, seen, report_fd);
    struct statx root;
    if (::statx(AT_FDCWD, "/", 0, STATX_INO | STATX_MNT_ID, &root) < 0) die(report_fd, "statx", "/");
    size_t hidden = 0;
    for (const auto& [step, path] : plan) {
        const char* p = path.c_str();
        int at = open_rule_path(step, p);
        if (at < 0) {
            if (errno == ENOENT && step == FileStep::hide) {
                hidden++;
                continue;
            }
            if (errno == ELOOP)
                die(report_fd,
                    step == FileStep::read_write ? "a read_write path must not be or pass through a symlink"
                                                 : "a rule's path leads through a magic link",
                    p);
            die(report_fd, "open", p);
        }
        struct statx stx;
        if (::statx(at, "", AT_EMPTY_PATH, STATX_TYPE | STATX_INO | STATX_MNT_ID, &stx) < 0) die(report_fd, "statx", p);
        bool is_root = stx.stx_ino == root.stx_ino && stx.stx_mnt_id == root.stx_mnt_id;
        if (step == FileStep::hide) {
            // Looked up from the host a moment before, with nothing run inside since.
            const Cover& cover = covers[hidden++];
            if (!cover.tree || cover.dir != S_ISDIR(stx.stx_mode)) {
                errno = ESTALE;
                die(report_fd, "hidden path changed since the host looked it up", p);
            }
            // A link to "/" would stack the cover on the root that every later join sees.
            if (is_root) {
                errno = EINVAL;
                die(report_fd, "a hidden path leads to /, which cannot be hidden", p);
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
    std::vector<HiddenSeen>* seen;
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
    std::vector<HiddenSeen> seen(rules.hidden.size());
    Work work{&plan, &*covers, &seen};
    return in_mount_namespace(init_pid, init_start, apply_work, &work, "applying the policy's file rules");
}

}  // namespace dsec::guard
