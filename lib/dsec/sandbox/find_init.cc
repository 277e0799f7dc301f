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

}  // namespace dsec::sandbox
