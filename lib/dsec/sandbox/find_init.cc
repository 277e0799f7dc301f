#include <fcntl.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsec/sandbox/sandbox.h"

namespace dsec::sandbox {

Result<std::string> find_init() {
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n < 0) return fail(sys_error("readlink", "/proc/self/exe"));
    std::string dir = fs::dirname(std::string(buf, size_t(n)));
    for (const std::string& candidate : {dir + "/dsec-init", dir + "/../libexec/dsec/dsec-init"})
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    return fail(make_error(Code::not_found, "dsec-init is neither beside dsec-run nor in ../libexec/dsec", dir));
}

namespace {
// Where the staged copy lives: a small tmpfs of its own, so that once an init has pivoted
// away from the host's tree its executable is "/dsec-init" on a mount of its own, and no
// host path (build or install directory, DSEC_RUN) is anywhere in it.
constexpr uint64_t kInitMountBytes = 16 << 20;

bool same_program(const struct stat& src, const struct stat& staged) {
    return src.st_size == staged.st_size && src.st_mtim.tv_sec == staged.st_mtim.tv_sec &&
           src.st_mtim.tv_nsec == staged.st_mtim.tv_nsec;
}

bool is_mount_root(const std::string& dir) {
    struct statx sx;
    if (::statx(AT_FDCWD, dir.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) < 0) return false;
    return (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

// Copies `program` into the staging mount as dsec-init (a new inode, renamed over the old
// one: running inits keep theirs), with the source's mode and mtime so that the next
// create sees it is current without reading it.
Status copy_program(const std::string& program, const struct stat& src, const std::string& dir) {
    Fd in(::open(program.c_str(), O_RDONLY | O_CLOEXEC));
    if (!in) return fail(sys_error("open", program));
    std::string tmp = dir + "/.dsec-init.tmp";
    Fd out(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700));
    if (!out) return fail(sys_error("open", tmp));
    for (off_t left = src.st_size; left > 0;) {
        ssize_t n = ::sendfile(out.get(), in.get(), nullptr, size_t(left));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail(sys_error("copy", tmp).context("staging dsec-init from " + program));
        left -= n;
    }
    struct timespec times[2] = {src.st_atim, src.st_mtim};
    if (::fchmod(out.get(), 0755) < 0 || ::futimens(out.get(), times) < 0) return fail(sys_error("chmod", tmp));
    if (::rename(tmp.c_str(), (dir + "/dsec-init").c_str()) < 0) return fail(sys_error("rename", tmp));
    return {};
}
}  // namespace

Result<std::string> stage_init(const std::string& run_dir, const std::string& program) {
    std::string dir = run_dir + "/init", staged = dir + "/dsec-init";
    struct stat src, have;
    if (::stat(program.c_str(), &src) < 0) return fail(sys_error("stat", program));
    if (::stat(staged.c_str(), &have) == 0 && same_program(src, have) && is_mount_root(dir)) return staged;

    auto held = fs::lock(run_dir + "/init.lock");
    if (!held) return fail(held.error());
    if (auto r = fs::mkdir_p(dir, 0700); !r) return fail(r.error());
    if (!is_mount_root(dir)) {
        std::string opts = "mode=0700,size=" + std::to_string(kInitMountBytes);
        if (::mount("dsec-init", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) < 0)
            return fail(sys_error("mount", dir).context("staging dsec-init"));
    }
    if (::stat(staged.c_str(), &have) == 0 && same_program(src, have)) return staged;
    if (auto r = copy_program(program, src, dir); !r) return fail(r.error());
    return staged;
}

}  // namespace dsec::sandbox
