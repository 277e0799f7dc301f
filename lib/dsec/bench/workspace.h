// A benchmark's private world: its own mount namespace (so layer mounts vanish with
// it), a temporary directory holding a fresh DSEC_ROOT and DSEC_RUN, and a busybox tree
// when the user gives none. The user's real state is untouched unless asked.
#pragma once

#include <optional>
#include <string>

#include "dsec/sys/error.h"
#include "dsec/sys/fs.h"

namespace dsec::bench {

/// Moves this process into a new mount namespace whose mounts do not propagate back
/// (unshare(CLONE_NEWNS) + MS_PRIVATE|MS_REC on /). Call before starting threads.
/// Errors: io (EPERM when not root).
Status private_mount_namespace();

class Workspace {
public:
    /// A temporary directory under $TMPDIR (or /tmp). With `private_state`, DSEC_ROOT
    /// and DSEC_RUN are set (for this process and every child) to root/ and run/ inside
    /// it, run/ on its own tmpfs. Errors: io.
    static Result<Workspace> make(bool private_state);
    Workspace(Workspace&&) = default;
    ~Workspace();

    const std::string& dir() const { return dir_.path(); }
    /// A fresh empty directory inside the workspace, for one variant's files.
    Result<std::string> subdir(const std::string& name) const;

private:
    explicit Workspace(fs::TempDir dir) : dir_(std::move(dir)) {}
    fs::TempDir dir_;
    bool run_mounted_ = false;
    std::string private_run_;  // set with private state: its cgroup parent goes at the end
};

/// Detaches every mount at or below `dir` (deepest first, lazily). Never fails.
void unmount_below(const std::string& dir);

/// Makes a small busybox tree at `dir` (bin/ with busybox and its applets as links,
/// etc/passwd, empty proc/ dev/ sys/ tmp/). Errors: not_found when /bin/busybox is
/// missing, io.
Status make_busybox_tree(const std::string& dir);

/// Bytes of the files below `dir` (st_blocks * 512, hard links once, same filesystem).
uint64_t disk_usage(const std::string& dir);

}  // namespace dsec::bench
