#include "dsec/ns/bind_stage.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/mount.h>

namespace dsec::ns {

BindStage::~BindStage() { leave(); }

void BindStage::leave() {
    if (!old_ns_) return;
    // Back in the host's namespace; the private one goes with its last user (us). setns
    // put us at that namespace's root: back to ours (dsec-run may run chrooted).
    (void)::setns(old_ns_.get(), CLONE_NEWNS);
    if (old_root_ && ::fchdir(old_root_.get()) == 0) (void)::chroot(".");
    if (old_cwd_) (void)::fchdir(old_cwd_.get());
    old_ns_.reset();
    old_root_.reset();
    old_cwd_.reset();
}

Status BindStage::enter(int template_ns, const std::string& dir, const std::vector<int>& mounts) {
    if (template_ns < 0 && mounts.empty()) return {};
    old_ns_.reset(::open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC));
    if (!old_ns_) return fail(sys_error("open", "/proc/thread-self/ns/mnt"));
    old_root_.reset(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    old_cwd_.reset(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
    auto failed = [&](Error e) {
        leave();
        return fail(std::move(e));
    };
    // This thread only (its own fs_struct comes with it); the process's others stay put.
    // setns into a mount namespace wants that fs_struct of our own.
    if (template_ns >= 0 && (::unshare(CLONE_FS) < 0 || ::setns(template_ns, CLONE_NEWNS) < 0))
        return failed(sys_error("setns", "the template mount namespace"));
    if (mounts.empty()) return {};
    if (::unshare(CLONE_NEWNS) < 0) return failed(sys_error("unshare", "mount namespace for binds"));
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0) return failed(sys_error("mount", "/ private"));
    // Searchable by root of the sandbox (an unmapped owner: no capability helps it there).
    if (::mount("dsec-binds", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k") < 0)
        return failed(sys_error("mount", dir));
    for (size_t i = 0; i < mounts.size(); i++) {
        std::string at = dir + "/b" + std::to_string(i);
        struct stat st;
        if (::fstat(mounts[i], &st) < 0) return failed(sys_error("fstat", "bind " + std::to_string(i)));
        if (S_ISDIR(st.st_mode) ? ::mkdir(at.c_str(), 0755) < 0
                                : !Fd(::open(at.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644)))
            return failed(sys_error("create", at));
        if (::syscall(SYS_move_mount, mounts[i], "", AT_FDCWD, at.c_str(), MOVE_MOUNT_F_EMPTY_PATH) < 0)
            return failed(sys_error("move_mount", at));
    }
    return {};
}

}  // namespace dsec::ns
