// Loading a compiled seccomp filter (dsec/guard/seccomp.h makes them): one raw syscall,
// safe between fork and execve.
#pragma once

#include <cstddef>

namespace dsec::ns {

/// Installs the BPF program `insns` (`bytes` long, an array of struct sock_filter) as a
/// seccomp filter of the calling thread, with seccomp(SECCOMP_SET_MODE_FILTER) through
/// syscall(2). The caller must have set no_new_privs (prctl PR_SET_NO_NEW_PRIVS) or hold
/// CAP_SYS_ADMIN in its user namespace. Async-signal-safe: no allocation, no libseccomp.
/// Returns 0, or -errno: -EINVAL for a size that is not 1 to BPF_MAXINSNS instructions,
/// otherwise what the kernel said (-EACCES without no_new_privs, -EINVAL for a program
/// the kernel's checker refuses).
int load_seccomp_filter(const void* insns, size_t bytes);

}  // namespace dsec::ns
