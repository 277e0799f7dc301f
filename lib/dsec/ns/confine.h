/* The confinement step every process entering a sandbox goes through, and the one way a
 * child reports a failure before execve.
 *
 * Plain C, async-signal-safe, no allocation: the same code runs in dsec-init (a static C
 * program, pid 1 of the sandbox, once its mounts are built) and in dsec-run's children
 * (exec, cp) between fork and execve, possibly forked from a multi-threaded process.
 * The caller prepares a `dsec_confinement` (the seccomp program already compiled) and
 * the child only applies it.
 */
#ifndef DSEC_NS_CONFINE_H
#define DSEC_NS_CONFINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    DSEC_CONFINEMENT_MAGIC = 0x64736563, /* "dsec" */
    DSEC_MAX_RLIMITS = 8,
    DSEC_MAX_SECCOMP_BYTES = 4096 * 8, /* BPF_MAXINSNS instructions */
};

/* What a process keeps when it enters a sandbox. */
struct dsec_confinement {
    uint32_t magic; /* DSEC_CONFINEMENT_MAGIC */
    uint32_t size;  /* sizeof(struct dsec_confinement): both ends are the same build */
    int64_t uid;    /* user to become (inside the sandbox's user namespace); -1: keep */
    int64_t gid;    /* group to become, supplementary groups cleared; -1: keep */
    uint64_t caps;  /* capabilities kept in the bounding, permitted and effective sets */
    uint32_t memory_merge; /* 1: pages eligible for KSM merging (PR_SET_MEMORY_MERGE) */
    uint32_t sched_idle;   /* 1: SCHED_IDLE (the batch CPU class) */
    uint32_t core_sched;   /* 1: the sandbox's core-scheduling cookie (latency class, SMT hosts) */
    uint32_t n_rlimits;
    struct {
        int resource;
        struct rlimit limit; /* lowered to the current hard limit if above it */
    } rlimits[DSEC_MAX_RLIMITS];
    uint32_t seccomp_bytes; /* size of the BPF program in `seccomp` (0: none) */
    unsigned char seccomp[DSEC_MAX_SECCOMP_BYTES];
};

/* Applies `c` to the calling thread, in this order: securebits locked (non-root users),
 * bounding set cut, ambient set cleared, groups and ids switched, permitted/effective/
 * inheritable set, no_new_privs, rlimits, KSM eligibility, CPU class, and the seccomp filter last
 * (the core-scheduling cookie is taken first, while the caller may still look at init).
 * Returns 0, or -1 with errno set and *failed_op naming the step. */
int dsec_confine(const struct dsec_confinement *c, const char **failed_op);

/* Closes every descriptor but the `n` in `keep` (sorted ascending; negative ones ignored). */
void dsec_close_all_but(const int *keep, size_t n);

/* A child's failure (or, with err 0, its success) in one fixed format: small enough for
 * one atomic pipe write (PIPE_BUF). */
struct dsec_report {
    int32_t err;    /* errno of the failing step; 0: success */
    int32_t value;  /* a value for the parent on success (a pid), else 0 */
    char op[56];    /* the failing step */
    char path[192]; /* what it acted on, inside the sandbox ("" when nothing) */
};

/* Writes a report to `fd` (truncating long strings). Async-signal-safe; keeps errno. */
void dsec_send_report(int fd, int err, int value, const char *op, const char *path);

#ifdef __cplusplus
}
#endif

#endif
