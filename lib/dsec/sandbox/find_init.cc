#include <fcntl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
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
    return fail(make_error("not_found", "dsec-init is neither beside dsec-run nor in ../libexec/dsec", dir));
}

Result<Fd> open_init(const std::string& program) {
    // A private, detached bind of the directory: once the init has pivoted away from the
    // host's tree, its executable is "/dsec-init" on a mount of its own, and the path it
    // came from is nowhere (a file under the host's root would keep its full path).
    std::string dir = fs::dirname(program);
    Fd tree(int(::syscall(SYS_open_tree, AT_FDCWD, dir.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)));
    if (!tree) return fail(sys_error("open_tree", dir));
    std::string name = program.substr(program.rfind('/') + 1);
    Fd fd(::openat(tree.get(), name.c_str(), O_PATH | O_CLOEXEC));
    if (!fd) return fail(sys_error("open", program));
    return fd;
}

}  // namespace dsec::sandbox
