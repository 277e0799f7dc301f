/* See confine.h. Only raw syscalls: this runs between fork and execve. */
#define _GNU_SOURCE
#include "dsec/ns/confine.h"

#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/securebits.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif
#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE 62
#define PR_SCHED_CORE_CREATE 1
#define PR_SCHED_CORE_SHARE_FROM 3
#endif
#define DSEC_PIDTYPE_PID 0
#define DSEC_PIDTYPE_TGID 1

#define FAIL(step)          \
    do {                    \
        *failed_op = (step); \
        return -1;          \
    } while (0)

/* Permitted and effective become what the caller has of `keep`; inheritable none. */
static int set_caps(uint64_t keep) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &header, data) < 0) return -1;
    uint64_t have = data[0].permitted | ((uint64_t)data[1].permitted << 32);
    keep &= have;
    memset(data, 0, sizeof data);
    data[0].effective = data[0].permitted = (uint32_t)keep;
    data[1].effective = data[1].permitted = (uint32_t)(keep >> 32);
    return (int)syscall(SYS_capset, &header, data);
}

int dsec_confine(const struct dsec_confinement *c, const char **failed_op) {
    if (c->magic != DSEC_CONFINEMENT_MAGIC || c->size != sizeof *c) {
        errno = EINVAL;
        FAIL("confinement record");
    }
    /* Latency class on an SMT host: no task of another sandbox (or of the host) runs on
     * the sibling thread of this one's core. pid 1 makes the sandbox's cookie, every later
     * door takes init's, before ids and capabilities change (the kernel checks ptrace
     * access to init). Best effort: the caller sets it only where the kernel has it. */
    if (c->core_sched) {
        if (getpid() == 1)
            (void)prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0, DSEC_PIDTYPE_TGID, 0);
        else
            (void)prctl(PR_SCHED_CORE, PR_SCHED_CORE_SHARE_FROM, 1, DSEC_PIDTYPE_PID, 0);
    }
    /* A non-root user can never get root's capabilities back: not by executing a
     * set-user-id-root program, not by keeping them across setuid. Needs CAP_SETPCAP,
     * so it comes before the bounding set is cut. */
    if (c->uid > 0 &&
        prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED |
                                     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                                     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
        FAIL("securebits");
    for (int cap = 0; cap < 64; cap++) {
        if (c->caps & (1ULL << cap)) continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL) break; /* past the kernel's last capability */
            FAIL("drop bounding capability");
        }
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) FAIL("clear ambient capabilities");
    if (c->gid >= 0) {
        if (syscall(SYS_setgroups, 0, NULL) < 0) FAIL("setgroups");
        if (syscall(SYS_setresgid, (gid_t)c->gid, (gid_t)c->gid, (gid_t)c->gid) < 0) FAIL("setresgid");
    }
    if (c->uid >= 0 && syscall(SYS_setresuid, (uid_t)c->uid, (uid_t)c->uid, (uid_t)c->uid) < 0) FAIL("setresuid");
    /* Changing ids sets the memory map's dumpability to fs.suid_dumpable, which a host may
     * have at 1: a command joined from outside shares dsec-run's map until its execve, and
     * a process inside with its new ids could then attach to it (where the seccomp
     * profile allows ptrace) before the filter below is on. Not dumpable again at once. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) FAIL("dumpable");
    /* Root keeps the allowed set; anyone else has none (setuid cleared them already,
     * and inheritable is always empty so nothing carries over execve). */
    if (set_caps(c->uid == 0 || c->uid < 0 ? c->caps : 0) < 0) FAIL("capset");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) FAIL("no_new_privs");
    for (uint32_t i = 0; i < c->n_rlimits && i < DSEC_MAX_RLIMITS; i++)
        if (dsec_lower_rlimit((int)c->rlimits[i].resource, c->rlimits[i].limit) < 0) FAIL("setrlimit");
    /* Identical pages of sandboxes (same layers, same runtimes) can be merged by ksmd; the
     * mark survives fork and execve. EINVAL: a kernel without it, merging is an extra. */
    if (c->memory_merge && prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) < 0 && errno != EINVAL) FAIL("memory merge");
    if (c->sched_idle) {
        struct sched_param none = {0};
        if (syscall(SYS_sched_setscheduler, 0, SCHED_IDLE, &none) < 0) FAIL("SCHED_IDLE");
    }
    if (c->seccomp_bytes) {
        struct sock_fprog prog = {(unsigned short)(c->seccomp_bytes / sizeof(struct sock_filter)),
                                  (struct sock_filter *)c->seccomp};
        if (c->seccomp_bytes % sizeof(struct sock_filter) || c->seccomp_bytes > DSEC_MAX_SECCOMP_BYTES) {
            errno = EINVAL;
            FAIL("seccomp program size");
        }
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) FAIL("seccomp");
    }
    return 0;
}

int dsec_exec_candidates(char *const *candidates, size_t n, char *const *argv, char *const *envp, char **sh_argv) {
    int err = ENOENT, eacces = 0;
    for (size_t i = 0; i < n; i++) {
        execve(candidates[i], argv, envp);
        if (errno == ENOEXEC) {
            sh_argv[1] = candidates[i];
            execve("/bin/sh", sh_argv, envp);
        }
        err = errno;
        if (err == EACCES) eacces = 1;
        else if (err != ENOENT && err != ENOTDIR && err != ESTALE && err != ENODEV && err != ETIMEDOUT) break;
    }
    return eacces ? EACCES : err;
}

int dsec_lower_rlimit(int resource, struct rlimit want) {
    struct rlimit now;
    if (syscall(SYS_getrlimit, resource, &now) < 0) return -1;
    if (want.rlim_max > now.rlim_max) want.rlim_max = now.rlim_max;
    if (want.rlim_cur > want.rlim_max) want.rlim_cur = want.rlim_max;
    return (int)syscall(SYS_setrlimit, resource, &want);
}

void dsec_close_all_but(const int *keep, size_t n) {
    unsigned from = 0;
    for (size_t i = 0; i < n; i++) {
        if (keep[i] < 0 || (unsigned)keep[i] < from) continue;
        if ((unsigned)keep[i] > from) syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0U);
        from = (unsigned)keep[i] + 1;
    }
    syscall(SYS_close_range, from, ~0U, 0U);
}

static void copy_str(char *dst, size_t size, const char *src) {
    size_t i = 0;
    for (; src && src[i] && i + 1 < size; i++) dst[i] = src[i];
    dst[i] = 0;
}

int dsec_send_report(int fd, int err, int value, const char *op, const char *path) {
    int saved = errno;
    struct dsec_report r;
    memset(&r, 0, sizeof r);
    r.err = err;
    r.value = value;
    copy_str(r.op, sizeof r.op, op);
    copy_str(r.path, sizeof r.path, path);
    ssize_t n;
    while ((n = write(fd, &r, sizeof r)) < 0 && errno == EINTR) {
    }
    errno = saved;
    return n == (ssize_t)sizeof r ? 0 : -1;
}

const char *dsec_fd_path(int fd, char *buf, size_t size) {
    int saved = errno;
    /* "/proc/self/fd/" and the number, written backwards from its last digit. */
    char link[32] = "/proc/self/fd/";
    char digits[12];
    size_t n = 0, at = strlen(link);
    unsigned v = fd < 0 ? 0 : (unsigned)fd;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < sizeof digits);
    while (n) link[at++] = digits[--n];
    link[at] = 0;
    ssize_t len = size ? readlink(link, buf, size - 1) : -1;
    if (size) buf[len > 0 ? len : 0] = 0;
    errno = saved;
    return buf;
}
