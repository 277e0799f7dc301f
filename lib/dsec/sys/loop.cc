#include "dsec/sys/loop.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dsec::sys {

Result<Loop> attach_loop(int fd) {
    Fd control(::open("/dev/loop-control", O_RDWR | O_CLOEXEC));
    if (!control) return fail(sys_error("open", "/dev/loop-control").context("no loop device support"));
    // Another process may take the free device between our asking and our binding it.
    for (int attempt = 0; attempt < 64; attempt++) {
        int n = ::ioctl(control.get(), LOOP_CTL_GET_FREE);
        if (n < 0) return fail(sys_error("LOOP_CTL_GET_FREE", "/dev/loop-control"));
        Loop loop{"/dev/loop" + std::to_string(n), Fd(::open(("/dev/loop" + std::to_string(n)).c_str(),
                                                                 O_RDONLY | O_CLOEXEC))};
        if (!loop.fd) {
            if (errno == ENOENT || errno == ENXIO) continue;
            return fail(sys_error("open", loop.path));
        }
        struct loop_config config;
        std::memset(&config, 0, sizeof config);
        config.fd = uint32_t(fd);
        config.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
        if (::ioctl(loop.fd.get(), LOOP_CONFIGURE, &config) == 0) return loop;
        if (errno != EBUSY) return fail(sys_error("LOOP_CONFIGURE", loop.path));
    }
    return fail(make_error(Code::busy, "no free loop device after 64 attempts", "/dev/loop-control"));
}

}  // namespace dsec::sys
