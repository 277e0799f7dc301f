// Descriptors passed over a Unix socket (SCM_RIGHTS), in one message with its data.
// Neither call allocates: both are fit for a child between clone and exec.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>

#include "dsec/sys/fd.h"

namespace dsec {

/// The most descriptors one message carries (the kernel's SCM_MAX_FD).
inline constexpr size_t kMaxFdsPerMessage = 253;

/// sendmsg of `iov` (`iovlen` entries) with the `k` descriptors of `fds` attached (none
/// when k is 0; at most kMaxFdsPerMessage), MSG_NOSIGNAL, retried on EINTR. Returns what
/// sendmsg returned: -1 with errno set on failure.
ssize_t send_fds(int sock, const struct iovec* iov, size_t iovlen, const int* fds, size_t k);

/// recvmsg of up to `len` bytes into `buf`, retried on EINTR, every descriptor received
/// close-on-exec. The first one passed goes to `fd`, any other is closed. Returns what
/// recvmsg returned: 0 at EOF, -1 with errno set on failure.
ssize_t recv_fd(int sock, void* buf, size_t len, Fd& fd);

}  // namespace dsec
