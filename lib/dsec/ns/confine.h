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

/* Sets limit `resource` to `want`, its hard limit lowered to the current one if above it
 * (raising one needs CAP_SYS_RESOURCE in the host's namespace) and its soft limit to the
 * hard one. Returns 0, or -1 with errno set. Async-signal-safe. */
int dsec_lower_rlimit(int resource, struct rlimit want);

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

/* Writes a report to `fd` (truncating long strings). Async-signal-safe; keeps errno.
 * Returns 0, or -1 when the write failed (the reader gone: EPIPE). */
int dsec_send_report(int fd, int err, int value, const char *op, const char *path);

/* The path of what descriptor `fd` has open, as /proc/self/fd says it, into `buf` (""
 * when it cannot be read). For a failure's report. Async-signal-safe; keeps errno.
 * Returns buf. */
const char *dsec_fd_path(int fd, char *buf, size_t size);

/* How a command's child reports a failure before its execve, on the pipe that closes at
 * the execve: the step (DSEC_STAGE_*) and its errno. */
struct dsec_exec_failure {
    int32_t stage;
    int32_t err;
};
enum { DSEC_STAGE_CHDIR = 0, DSEC_STAGE_CONFINE = 1, DSEC_STAGE_EXEC = 2, DSEC_STAGE_PTY = 3 };

/* execve on each of `n` candidate paths in turn, as execvp searches PATH: a file without
 * a #! line (ENOEXEC) is run by /bin/sh, with sh_argv[1] set to it (sh_argv: "/bin/sh",
 * a slot, then argv[1..]). Returns only on failure, with the errno execvp would give:
 * EACCES if any candidate was not executable, else the last error; the search stops at
 * an error other than "not there". Async-signal-safe. */
int dsec_exec_candidates(char *const *candidates, size_t n, char *const *argv, char *const *envp, char **sh_argv);

/* Exec served by the sandbox's init (dsec-init.c): dsec-run connects to the sandbox's
 * exec.sock (a SOCK_SEQPACKET socket only the init listens on; the run directory is out
 * of the sandbox's reach) and sends one message: a dsec_exec_request, then `bytes` of
 * NUL-terminated strings (the working directory, argc arguments, envc environment
 * entries, ncand candidate paths), with SCM_RIGHTS carrying the command's stdin, stdout,
 * stderr and the write end of its failure pipe, in that order. The init forks a child
 * that takes them as 0-2 (the pipe close-on-exec), starts a session, takes the caller's
 * umask, nice value, resource limits (but core, nofile and fsize, which the sandbox sets:
 * those stay the init's) and CPU affinity, as a command joined from outside inherits them,
 * enters the directory and execs as root of the sandbox, inheriting everything else of the
 * init's (namespaces, cgroups, bounding set, capabilities, no_new_privs, seccomp). It
 * answers with a dsec_exec_started (and, when err is 0, a pidfd of the child by
 * SCM_RIGHTS; err is nonzero only when no child was made), then, once it has reaped the
 * child, a dsec_exec_ended, and closes the connection. */
enum {
    DSEC_EXEC_MAGIC = 0x33657364, /* "dse3"; an init of an older layout refuses it, and exec joins */
    DSEC_EXEC_MAX_BYTES = 60 * 1024, /* the whole message, within a socket buffer */
    DSEC_EXEC_NFDS = 4,
    DSEC_EXEC_NLIMITS = 16,          /* RLIMIT_CPU .. RLIMIT_RTTIME */
    DSEC_EXEC_CPUSET_BYTES = 128,    /* an affinity mask of up to 1024 CPUs */
    /* A one-shot sandbox's own command (dsec-run run): once it has ended, the one-shot's
     * init leaves (init.h, dsec_init_main_one_shot). */
    DSEC_EXEC_ENDS_SANDBOX = 1,
};
struct dsec_exec_request {
    uint32_t magic;
    uint32_t argc, envc, ncand;
    uint32_t bytes;
    uint32_t umask;      /* the caller's, as a command joined from outside would have */
    int32_t nice;        /* the caller's; only raising it can succeed (no CAP_SYS_NICE) */
    uint32_t cpus_bytes; /* how much of `cpus` the caller's affinity fills; 0: the init's */
    uint32_t flags;      /* DSEC_EXEC_ENDS_SANDBOX */
    /* The caller's limits by resource number. Hard limits above the init's are capped at
     * them (raising one needs CAP_SYS_RESOURCE in the host's namespace). */
    struct {
        uint64_t cur, max;
    } limits[DSEC_EXEC_NLIMITS];
    uint8_t cpus[DSEC_EXEC_CPUSET_BYTES];
};
struct dsec_exec_started {
    int32_t err;
    int32_t pid; /* in the sandbox's pid namespace */
};
/* A one-shot's own command has ended and nothing else is at work in the sandbox (no
 * process but the init, no other connection, none waiting): the init leaves as it sends
 * this, so nothing of the sandbox runs on and its teardown need not be waited for. */
enum { DSEC_EXEC_INIT_LEAVES = 1 };
struct dsec_exec_ended {
    int32_t code;   /* siginfo si_code: CLD_EXITED, CLD_KILLED, CLD_DUMPED */
    int32_t status; /* si_status */
    uint32_t flags; /* DSEC_EXEC_INIT_LEAVES; an older init sends the first two only */
};

#ifdef __cplusplus
}
#endif

#endif
