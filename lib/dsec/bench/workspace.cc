#include "dsec/bench/workspace.h"

#include "dsec/cgroup/cgroup.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "dsec/sys/fs.h"

namespace dsec::bench {

Status private_mount_namespace() {
    if (::unshare(CLONE_NEWNS) < 0) return fail(sys_error("unshare", "CLONE_NEWNS"));
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0)
        return fail(sys_error("mount", "/ (MS_PRIVATE)"));
    return {};
}

Result<Workspace> Workspace::make(bool private_state) {
    const char* tmp = std::getenv("TMPDIR");
    auto dir = fs::TempDir::make(tmp && *tmp ? tmp : "/tmp", "dsec-bench.");
    if (!dir) return fail(dir.error());
    Workspace ws(std::move(*dir));
    if (!private_state) return ws;
    std::string root = ws.dir() + "/root", run = ws.dir() + "/run";
    if (auto r = fs::mkdir_p(root); !r) return fail(r.error());
    if (auto r = fs::mkdir_p(run); !r) return fail(r.error());
    // The run directory holds mountpoints and state: a tmpfs of its own, like /run.
    if (::mount("dsec-bench-run", run.c_str(), "tmpfs", 0, "mode=0755") < 0)
        return fail(sys_error("mount tmpfs", run));
    ws.run_mounted_ = true;
    ws.private_run_ = run;
    ::setenv("DSEC_ROOT", root.c_str(), 1);
    ::setenv("DSEC_RUN", run.c_str(), 1);
    return ws;
}

Workspace::~Workspace() {
    if (!dir_.path().empty()) unmount_below(dir_.path());
    // The sandboxes are gone by now; their parent group is this run's own.
    if (!private_run_.empty()) cgroup::remove_parent_if_empty(cgroup::parent_for_run(private_run_));
}

Result<std::string> Workspace::subdir(const std::string& name) const {
    std::string p = dir() + "/" + name;
    if (auto r = fs::remove_tree(p); !r) return fail(r.error());
    if (auto r = fs::mkdir_p(p); !r) return fail(r.error());
    return p;
}

void unmount_below(const std::string& dir) {
    auto mounts = fs::read_file("/proc/self/mounts");
    if (!mounts) return;
    std::vector<std::string> targets;
    std::istringstream in(*mounts);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string src, target;
        if (!(f >> src >> target)) continue;
        if (target == dir || target.rfind(dir + "/", 0) == 0) targets.push_back(target);
    }
    std::sort(targets.rbegin(), targets.rend());
    for (auto& t : targets) ::umount2(t.c_str(), MNT_DETACH);
}

Status make_busybox_tree(const std::string& dir) {
    if (::access("/bin/busybox", X_OK) != 0)
        return fail(make_error(Code::not_found, "busybox is needed for the default tree (busybox-static)", "/bin/busybox"));
    for (auto sub : {"bin", "sbin", "etc", "tmp", "proc", "sys", "dev", "root", "usr/bin"})
        if (auto r = fs::mkdir_p(dir + "/" + sub); !r) return fail(r.error());
    std::error_code ec;
    std::filesystem::copy_file("/bin/busybox", dir + "/bin/busybox",
                               std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) return fail(errno_error(ec.value(), "copy", dir + "/bin/busybox"));
    for (auto app : {"sh", "ls", "cat", "echo", "true", "false", "sleep", "env", "id", "ps", "mkdir", "rm",
                     "touch", "wc", "head", "yes", "seq", "find", "xargs", "md5sum"}) {
        std::string link = dir + "/bin/" + app;
        ::unlink(link.c_str());
        if (::symlink("busybox", link.c_str()) < 0) return fail(sys_error("symlink", link));
    }
    if (auto r = fs::atomic_write(dir + "/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"); !r) return r;
    return fs::atomic_write(dir + "/etc/group", "root:x:0:\n");
}

uint64_t disk_usage(const std::string& dir) {
    namespace sfs = std::filesystem;
    std::error_code ec;
    struct stat top;
    if (::lstat(dir.c_str(), &top) < 0) return 0;
    uint64_t total = uint64_t(top.st_blocks) * 512;
    std::set<std::pair<dev_t, ino_t>> seen;
    for (auto it = sfs::recursive_directory_iterator(dir, sfs::directory_options::skip_permission_denied, ec);
         !ec && it != sfs::recursive_directory_iterator(); it.increment(ec)) {
        struct stat st;
        if (::lstat(it->path().c_str(), &st) < 0) continue;
        if (st.st_dev != top.st_dev) {
            it.disable_recursion_pending();
            continue;
        }
        if (st.st_nlink > 1 && !seen.insert({st.st_dev, st.st_ino}).second) continue;
        total += uint64_t(st.st_blocks) * 512;
    }
    return total;
}

}  // namespace dsec::bench
