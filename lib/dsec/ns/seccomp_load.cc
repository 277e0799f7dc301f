#include "dsec/ns/seccomp_load.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace dsec::ns {

int load_seccomp_filter(const void* insns, size_t bytes) {
    if (bytes == 0 || bytes % sizeof(sock_filter) != 0 || bytes / sizeof(sock_filter) > BPF_MAXINSNS)
        return -EINVAL;
    sock_fprog prog{};
    prog.len = static_cast<unsigned short>(bytes / sizeof(sock_filter));
    // The kernel copies the program and never writes to it.
    prog.filter = static_cast<sock_filter*>(const_cast<void*>(insns));
    if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return -errno;
    return 0;
}

}  // namespace dsec::ns
