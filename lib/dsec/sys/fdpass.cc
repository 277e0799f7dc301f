#include "dsec/sys/fdpass.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dsec {

ssize_t send_fds(int sock, const struct iovec* iov, size_t iovlen, const int* fds, size_t k) {
    if (k > kMaxFdsPerMessage) {
        errno = EINVAL;
        return -1;
    }
    alignas(struct cmsghdr) char control[CMSG_SPACE(kMaxFdsPerMessage * sizeof(int))];
    struct msghdr msg = {};
    msg.msg_iov = const_cast<struct iovec*>(iov);
    msg.msg_iovlen = iovlen;
    if (k > 0) {
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(k * sizeof(int));
        std::memset(control, 0, msg.msg_controllen);
        struct cmsghdr* cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(k * sizeof(int));
        std::memcpy(CMSG_DATA(cm), fds, k * sizeof(int));
    }
    ssize_t n;
    while ((n = ::sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    return n;
}

ssize_t recv_fd(int sock, void* buf, size_t len, Fd& fd) {
    // Room for as many as a message can carry: whatever a peer sends is received, and
    // closed here, rather than cut off (MSG_CTRUNC) and leaked into the kernel's lap.
    alignas(struct cmsghdr) char control[CMSG_SPACE(kMaxFdsPerMessage * sizeof(int))];
    struct iovec iov = {buf, len};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    while ((n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    int saved = errno;
    for (struct cmsghdr* cm = n >= 0 ? CMSG_FIRSTHDR(&msg) : nullptr; cm; cm = CMSG_NXTHDR(&msg, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0)) continue;
        size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int got;
            std::memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof got);
            if (!fd)
                fd.reset(got);
            else
                ::close(got);
        }
    }
    errno = saved;
    return n;
}

}  // namespace dsec
