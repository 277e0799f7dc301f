/* dsec-probe: the attacks of the red-team tests (tests/integration/4*-sec-*.sh), one
 * subcommand each. Run inside a sandbox only, never on the host.
 *
 *   dsec-probe ATTACK [ARGS...]
 *
 * prints one line "ATTACK RESULT [DETAIL...]" and exits 0, so that tests compare results:
 * RESULT is "ok" when the attack succeeded, else the errno name of the refusal (EPERM,
 * ENOSYS, EACCES, ...), or for a few attacks a word of their own: SIGSYS (the process
 * was killed by seccomp), "none" (a scan or chroot escape that got nowhere), "pipe" (a
 * descriptor that is no file), "unlimited" (a limit with nothing above it to reach).
 * DETAIL says what was reached or how far the attack got. Exit 2: usage.
 *
 * Static, without the dsec library, and only raw syscalls for the attacks: the errno
 * printed is the kernel's (and seccomp's), not a libc fallback's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/if_ether.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/mount.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

/* Scratch files and directories the attacks make (and remove) in the sandbox's /tmp. */
#define SCRATCH "/tmp/dsec-probe"
/* `scan` stops early once this file exists. */
#define SCAN_STOP "/tmp/dsec-probe-scan-stop"

/* The attack being run: its table entry (name, and the data of attacks that share code). */
struct attack {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *args;
    const char *str[2];
    long num[3];
};
static const struct attack *self;

/* Prints the attack's line: its name, the result word, the detail. */
static void vline(const char *word, const char *fmt, va_list ap) {
    char *detail = NULL;
    if (fmt && vasprintf(&detail, fmt, ap) < 0) detail = NULL;
    printf("%s %s%s%s\n", self->name, word, detail && *detail ? " " : "", detail ? detail : "");
    fflush(stdout);
    free(detail);
}

/* The line with "ok" for err == 0, else the errno's name. */
static void result(int err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vline(err ? strerrorname_np(err) : "ok", fmt, ap);
    va_end(ap);
}

/* The line with a result word of its own (SIGSYS, none, pipe...). */
static void result_word(const char *word, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vline(word, fmt, ap);
    va_end(ap);
}

/* The errno of a raw syscall's return: 0 on success. */
static int err_of(long r) { return r < 0 ? errno : 0; }

static void report(long r) { result(err_of(r), NULL); }

static int usage(const char *what) {
    fprintf(stderr, "usage: dsec-probe %s %s\n", self->name, what);
    return 2;
}

/* Opens PATH read-only, the first step of an attack: on failure prints the attack's line
 * (it stopped there) and returns -1. */
static int open_first(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) result(errno, "open:%s", path);
    return fd;
}

static void make_scratch(void) {
    if (mkdir(SCRATCH, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "dsec-probe: mkdir %s: %m\n", SCRATCH);
        exit(1);
    }
}

/* A child that waits to be attacked, killed with its parent. */
static pid_t spawn_victim(void) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;) pause();
    }
    return pid;
}

static void kill_victim(pid_t pid) {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Runs fn in a forked child: the child's exit status is the errno (0: succeeded). A child
 * killed by a signal is reported by the signal's name (SIGSYS from seccomp). */
static void in_child(int (*fn)(void), const char *detail) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        result(errno, "fork");
        return;
    }
    if (pid == 0) _exit(fn());
    int status;
    if (waitpid(pid, &status, 0) < 0) {
        result(errno, "waitpid");
        return;
    }
    if (WIFSIGNALED(status)) {
        char word[32];
        snprintf(word, sizeof word, "SIG%s", sigabbrev_np(WTERMSIG(status)));
        result_word(word, "%s", detail);
    } else {
        result(WEXITSTATUS(status), "%s", detail);
    }
}

/* ---- what the process holds ---- */

static int a_status(int argc, char **argv) {
    static const char *keys[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"};
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) {
        result(errno, "/proc/self/status");
        return 0;
    }
    char line[256], out[512] = "";
    while (fgets(line, sizeof line, f)) {
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
            size_t n = strlen(keys[i]);
            if (strncmp(line, keys[i], n) || line[n] != ':') continue;
            char *v = line + n + 1;
            v += strspn(v, " \t");
            v[strcspn(v, "\n")] = 0;
            snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s=%s", *out ? " " : "", keys[i], v);
        }
    }
    fclose(f);
    result(0, "%s", out);
    return 0;
}

static int a_whoami(int argc, char **argv) {
    uid_t r, e, s;
    gid_t gr, ge, gs;
    getresuid(&r, &e, &s);
    getresgid(&gr, &ge, &gs);
    result(0, "uid=%u euid=%u suid=%u gid=%u egid=%u", r, e, s, gr, ge);
    return 0;
}

static const char *limit_str(rlim_t v, char *buf, size_t n) {
    if (v == RLIM_INFINITY) return "inf";
    snprintf(buf, n, "%llu", (unsigned long long)v);
    return buf;
}

static int a_rlimits(int argc, char **argv) {
    static const struct {
        const char *name;
        int res;
    } lims[] = {{"core", RLIMIT_CORE}, {"nofile", RLIMIT_NOFILE}, {"nproc", RLIMIT_NPROC}};
    char out[256] = "", a[24], b[24];
    for (size_t i = 0; i < sizeof lims / sizeof *lims; i++) {
        struct rlimit rl;
        getrlimit(lims[i].res, &rl);
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s=%s/%s", i ? " " : "", lims[i].name,
                 limit_str(rl.rlim_cur, a, sizeof a), limit_str(rl.rlim_max, b, sizeof b));
    }
    result(0, "%s", out);
    return 0;
}

/* Raises a hard limit past where it is: needs CAP_SYS_RESOURCE. */
static int a_rlimit_raise(int argc, char **argv) {
    if (argc < 2) return usage("core|nofile");
    int res = !strcmp(argv[1], "core") ? RLIMIT_CORE : !strcmp(argv[1], "nofile") ? RLIMIT_NOFILE : -1;
    if (res < 0) return usage("core|nofile");
    struct rlimit rl;
    getrlimit(res, &rl);
    if (rl.rlim_max == RLIM_INFINITY) {
        result_word("unlimited", "%s", argv[1]);
        return 0;
    }
    struct rlimit up = {rl.rlim_max + 1, rl.rlim_max + 1};
    result(err_of(setrlimit(res, &up)), "%s hard=%llu", argv[1], (unsigned long long)rl.rlim_max);
    return 0;
}

static int a_statfs(int argc, char **argv) {
    if (argc < 2) return usage("PATH");
    struct statfs s;
    if (statfs(argv[1], &s) < 0) {
        result(errno, "%s", argv[1]);
        return 0;
    }
    result(0, "total=%llu free=%llu", (unsigned long long)s.f_blocks * s.f_bsize,
           (unsigned long long)s.f_bavail * s.f_bsize);
    return 0;
}

/* ---- privilege ---- */

static int a_capset_all(int argc, char **argv) {
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0xff, sizeof d);
    report(syscall(SYS_capset, &h, d));
    return 0;
}

static int a_ambient_raise(int argc, char **argv) {
    int cap = argc > 1 ? atoi(argv[1]) : CAP_SYS_ADMIN;
    report(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0));
    return 0;
}

static int a_setuid0(int argc, char **argv) {
    report(syscall(SYS_setuid, 0));
    return 0;
}

/* Gives PATH every capability the kernel knows as a permitted file capability (v2; the
 * kernel turns it into v3 with the user namespace's root). Without the effective flag:
 * with it, an exec that cannot get them all fails (EPERM) instead of showing what it got. */
static int a_setfcap(int argc, char **argv) {
    if (argc < 2) return usage("PATH");
    struct vfs_cap_data d = {.magic_etc = VFS_CAP_REVISION_2};
    d.data[0].permitted = 0xffffffff;
    d.data[1].permitted = (1U << (CAP_LAST_CAP - 31)) - 1;
    report(setxattr(argv[1], "security.capability", &d, XATTR_CAPS_SZ_2, 0));
    return 0;
}

static int a_mknod(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : SCRATCH "-mem";
    /* 1:1 is /dev/mem. */
    if (mknod(path, S_IFCHR | 0600, makedev(1, 1)) < 0) {
        result(errno, "%s", path);
        return 0;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    result(0, "%s open:%s", path, fd >= 0 ? "ok" : strerrorname_np(errno));
    if (fd >= 0) close(fd);
    unlink(path);
    return 0;
}

/* ---- mounts and file handles ---- */

static int a_name_to_handle_at(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/";
    struct {
        struct file_handle h;
        unsigned char room[MAX_HANDLE_SZ];
    } fh = {.h.handle_bytes = MAX_HANDLE_SZ};
    int mount_id;
    long r = syscall(SYS_name_to_handle_at, AT_FDCWD, path, &fh.h, &mount_id, 0);
    if (r < 0) result(errno, "%s", path);
    else result(0, "%s type=%d bytes=%u", path, fh.h.handle_type, fh.h.handle_bytes);
    return 0;
}

/* The "shocker" attack: a handle forged for inode 2 (the root directory of ext4, as
 * FILEID_INO32_GEN = 1), opened relative to the filesystem that holds PATH. */
static int a_open_by_handle_at(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/";
    int mfd = open_first(path);
    if (mfd < 0) return 0;
    struct {
        struct file_handle h;
        uint32_t ino, gen;
    } fh = {.h = {.handle_bytes = 8, .handle_type = 1}, .ino = 2, .gen = 0};
    long fd = syscall(SYS_open_by_handle_at, mfd, &fh.h, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        result(errno, "%s", path);
        return 0;
    }
    struct stat st;
    fstat((int)fd, &st);
    result(0, "%s dev=%u:%u ino=%llu", path, major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino);
    return 0;
}

/* mount(2) of a fresh filesystem (type str[0], data str[1]) on a scratch directory;
 * unmounted again if it worked. */
static int a_mount(int argc, char **argv) {
    const char *type = self->str[0], *data = self->str[1];
    make_scratch();
    long r = syscall(SYS_mount, type, SCRATCH, type, 0L, data);
    result(err_of(r), "%s%s%s", type, data ? " " : "", data ? data : "");
    if (r == 0) umount2(SCRATCH, MNT_DETACH);
    return 0;
}

/* Bind-remounts PATH without MS_RDONLY (and without nosuid/nodev/noexec). */
static int a_remount_rw(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/proc/sys";
    report(syscall(SYS_mount, NULL, path, NULL, (long)(MS_REMOUNT | MS_BIND), NULL));
    return 0;
}

/* The same through the new mount API. */
static int a_setattr_rw(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/proc/sys";
    struct mount_attr attr = {.attr_clr = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID};
    report(syscall(SYS_mount_setattr, AT_FDCWD, path, 0, &attr, sizeof attr));
    return 0;
}

static int a_umount(int argc, char **argv) {
    if (argc < 2) return usage("PATH");
    long r = syscall(SYS_umount2, argv[1], (long)MNT_DETACH);
    result(err_of(r), "%s", argv[1]);
    return 0;
}

/* A clone of PATH's mount without what is mounted over it: /proc without its masks. */
static int a_open_tree(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/proc";
    long fd = syscall(SYS_open_tree, AT_FDCWD, path, (long)(OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
    result(err_of(fd), "%s", path);
    return 0;
}

static int a_fsopen(int argc, char **argv) {
    const char *type = argc > 1 ? argv[1] : "tmpfs";
    long fd = syscall(SYS_fsopen, type, (long)FSOPEN_CLOEXEC);
    result(err_of(fd), "%s", type);
    return 0;
}

/* Paths that do not exist: refused before any lookup by seccomp or by the capability
 * check, ENOENT otherwise; nothing can change either way. */
static int a_pivot_root(int argc, char **argv) {
    report(syscall(SYS_pivot_root, "/nonexistent-dsec-probe", "/nonexistent-dsec-probe"));
    return 0;
}

static int a_swapon(int argc, char **argv) {
    report(syscall(SYS_swapon, "/nonexistent-dsec-probe", 0L));
    return 0;
}

/* Opens PATH with `flags` and closes it, reporting how the open went. */
static int open_only(int argc, char **argv, int flags) {
    if (argc < 2) return usage("PATH");
    int fd = open(argv[1], flags | O_CLOEXEC);
    result(fd < 0 ? errno : 0, "%s", argv[1]);
    if (fd >= 0) close(fd);
    return 0;
}

/* Opens PATH for writing without writing anything. */
static int a_open_write(int argc, char **argv) { return open_only(argc, argv, O_WRONLY); }

/* Opens PATH (a file or a directory) for reading without reading anything. */
static int a_open_read(int argc, char **argv) { return open_only(argc, argv, O_RDONLY); }

/* The classic chroot escape (chroot into a subdirectory, climb out with ".."); it must
 * not get above the sandbox's root. "ok" means "/" ended up elsewhere. */
static int a_chroot_escape(int argc, char **argv) {
    struct stat before, after;
    stat("/", &before);
    make_scratch();
    int keep = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (syscall(SYS_chroot, SCRATCH) < 0) {
        result(errno, "chroot");
        return 0;
    }
    fchdir(keep);
    for (int i = 0; i < 64; i++) chdir("..");
    if (syscall(SYS_chroot, ".") < 0) {
        result(errno, "chroot ..");
        return 0;
    }
    stat("/", &after);
    if (after.st_dev == before.st_dev && after.st_ino == before.st_ino) result_word("none", "root unchanged");
    else result(0, "root dev=%u:%u ino=%llu", major(after.st_dev), minor(after.st_dev),
                (unsigned long long)after.st_ino);
    return 0;
}

/* What lies beneath the sandbox's root, for a process allowed to look (CAP_SYS_ADMIN and
 * no seccomp): keep a descriptor of our mount namespace, detach "/", join the namespace
 * again (which puts us at its root) and list what is there. "ok" when anything of the
 * host's is found (a directory other than the template's dev, proc and r, or a layer or
 * upper still mounted at r/l0 or r/u), else "none"; each step's refusal is its errno.
 * Leaves the sandbox without a root: run it in a sandbox of its own. */
static int entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static int a_beneath_root(int argc, char **argv) {
    int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    if (ns < 0) {
        result(errno, "open /proc/self/ns/mnt");
        return 0;
    }
    if (umount2("/", MNT_DETACH) < 0) {
        result(errno, "umount /");
        return 0;
    }
    if (syscall(SYS_setns, ns, CLONE_NEWNS) < 0) {
        result(errno, "setns");
        return 0;
    }
    DIR *d = opendir("/");
    if (!d) {
        result(errno, "opendir /");
        return 0;
    }
    char found[256] = "";
    for (struct dirent *e; (e = readdir(d));) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "dev") || !strcmp(n, "proc") || !strcmp(n, "r")) continue;
        snprintf(found + strlen(found), sizeof found - strlen(found), " /%.32s", n);
    }
    closedir(d);
    /* The init's scratch is on /r: its layers' and upper's own mounts hang on r/s/l0,
     * r/s/l1, ... and r/s/u until the init drops them; only their empty mountpoints may
     * be left. */
    if ((d = opendir("/r/s"))) {
        char path[64];
        for (struct dirent *e; (e = readdir(d));) {
            snprintf(path, sizeof path, "/r/s/%.32s", e->d_name);
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && entries(path) != 0)
                snprintf(found + strlen(found), sizeof found - strlen(found), " %.40s", path);
        }
        closedir(d);
    }
    if (found[0]) result(0, "beneath the root:%s", found);
    else result_word("none", "only the template's dev, proc and r");
    return 0;
}

/* The same way down to the template's root, then at its /dev (the nodes every sandbox's
 * /dev binds from): remount it read-write, then make a node there. "ok" if either works. */
static int a_template_dev(int argc, char **argv) {
    int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    if (ns < 0 || umount2("/", MNT_DETACH) < 0 || syscall(SYS_setns, ns, CLONE_NEWNS) < 0) {
        result(errno, "getting beneath the root");
        return 0;
    }
    if (mount(NULL, "/dev", NULL, MS_REMOUNT | MS_BIND, NULL) == 0) {
        result(0, "remounted the template's /dev read-write");
        return 0;
    }
    int remount = errno;
    if (mknod("/dev/mem", S_IFCHR | 0600, makedev(1, 1)) == 0) {
        result(0, "made /dev/mem in the template's /dev");
        return 0;
    }
    result(remount, "remount /dev read-write; mknod: %s", strerror(errno));
    return 0;
}

/* ---- namespaces and processes ---- */

/* unshare(2) with the flags in num[0]. */
static int a_unshare(int argc, char **argv) {
    report(syscall(SYS_unshare, self->num[0]));
    return 0;
}

/* clone(2) (num[1] == 0) or clone3(2) with the flags in num[0]: the child exits at
 * once; report what the parent got. */
static int a_clone(int argc, char **argv) {
    fflush(stdout);
    struct clone_args args = {.flags = (unsigned long long)self->num[0], .exit_signal = SIGCHLD};
    long pid = self->num[1] ? syscall(SYS_clone3, &args, sizeof args)
                            : syscall(SYS_clone, self->num[0] | SIGCHLD, 0L, NULL, NULL, 0L);
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid((pid_t)pid, NULL, 0);
    report(pid);
    return 0;
}

static int a_setns(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/proc/self/ns/user";
    int fd = open_first(path);
    if (fd < 0) return 0;
    long r = syscall(SYS_setns, fd, 0L);
    result(err_of(r), "%s", path);
    return 0;
}

static pid_t pid_arg(int argc, char **argv) {
    if (argc < 2) return 0;
    return !strcmp(argv[1], "self") ? getpid() : (pid_t)atoi(argv[1]);
}

/* Runs try against the pid in argv[1]: a number, "self", or "child" for a child of our
 * own made for the purpose (same user, dumpable: only seccomp stands in the way). */
static int on_target(int argc, char **argv, void (*try)(pid_t)) {
    if (argc > 1 && !strcmp(argv[1], "child")) {
        pid_t v = spawn_victim();
        try(v);
        kill_victim(v);
        return 0;
    }
    pid_t pid = pid_arg(argc, argv);
    if (pid <= 0) return usage("PID|self|child");
    try(pid);
    return 0;
}

static void try_ptrace(pid_t pid) {
    long r = syscall(SYS_ptrace, (long)PTRACE_ATTACH, (long)pid, NULL, NULL);
    result(err_of(r), "pid=%d", pid);
    if (r == 0) {
        waitpid(pid, NULL, __WALL);
        syscall(SYS_ptrace, (long)PTRACE_DETACH, (long)pid, NULL, NULL);
    }
}

/* Reads a word at the address where our own copy of it is (right for a child). */
static int probe_word = 0x5eed;

static void try_vm_read(pid_t pid) {
    int got = 0;
    struct iovec local = {&got, sizeof got}, remote = {&probe_word, sizeof probe_word};
    long r = syscall(SYS_process_vm_readv, (long)pid, &local, 1L, &remote, 1L, 0L);
    result(err_of(r), "pid=%d", pid);
}

/* Takes a copy of the first descriptor of pid that it can: host descriptors leaked
 * into a sandbox process would be reachable this way. */
static void try_getfd(pid_t pid) {
    long pfd = syscall(SYS_pidfd_open, (long)pid, 0L);
    if (pfd < 0) {
        result(errno, "pidfd_open pid=%d", pid);
        return;
    }
    int last = EBADF;
    for (int fd = 0; fd < 64; fd++) {
        long got = syscall(SYS_pidfd_getfd, pfd, (long)fd, 0L);
        if (got >= 0) {
            char link[64], target[512] = "";
            snprintf(link, sizeof link, "/proc/self/fd/%ld", got);
            ssize_t n = readlink(link, target, sizeof target - 1);
            if (n > 0) target[n] = 0;
            result(0, "pid=%d fd=%d %s", pid, fd, target);
            return;
        }
        if (errno != EBADF) last = errno;
    }
    result(last, "pid=%d", pid);
}

static int a_ptrace(int argc, char **argv) { return on_target(argc, argv, try_ptrace); }
static int a_vm_read(int argc, char **argv) { return on_target(argc, argv, try_vm_read); }
static int a_pidfd_getfd(int argc, char **argv) { return on_target(argc, argv, try_getfd); }

/* Reads a /proc file of pid whole (NULs as spaces) into buf. */
static int read_proc(pid_t pid, const char *name, char *buf, size_t size) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    size_t len = 0;
    ssize_t n;
    while (len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0) len += (size_t)n;
    int err = n < 0 ? errno : 0;
    close(fd);
    for (size_t i = 0; i < len; i++)
        if (buf[i] == 0 || buf[i] == '\n') buf[i] = ' ';
    buf[len] = 0;
    return err;
}

static int read_link(pid_t pid, const char *name, char *buf, size_t size) {
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    ssize_t n = readlink(path, buf, size - 1);
    if (n < 0) return errno;
    buf[n] = 0;
    return 0;
}

/* Shows /proc/PID/str[0] of another process: a file (num[0] == 0) or a link. */
static int a_proc(int argc, char **argv) {
    pid_t pid = pid_arg(argc, argv);
    if (pid <= 0) return usage("PID");
    static char buf[65536];
    int err = self->num[0] ? read_link(pid, self->str[0], buf, sizeof buf)
                           : read_proc(pid, self->str[0], buf, sizeof buf);
    result(err, "%s", err ? "" : buf);
    return 0;
}

/* The targets of pid's descriptors: "ok" with "N:target" for each one readable, else
 * the first refusal. */
static int a_fd(int argc, char **argv) {
    pid_t pid = pid_arg(argc, argv);
    if (pid <= 0) return usage("PID");
    char dir[64], out[8192] = "";
    snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
    DIR *d = opendir(dir);
    if (!d) {
        result(errno, "%s", dir);
        return 0;
    }
    int refused = 0, shown = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char name[48], target[1024];
        snprintf(name, sizeof name, "fd/%.40s", e->d_name);
        int err = read_link(pid, name, target, sizeof target);
        if (err) {
            if (!refused) refused = err;
            continue;
        }
        shown++;
        snprintf(out + strlen(out), sizeof out - strlen(out), " %s:%s", e->d_name, target);
    }
    closedir(d);
    if (shown || !refused) result(0, "%s", out + (*out == ' '));
    else result(refused, "%s", dir);
    return 0;
}

/* Reopens fd N of pid for writing through /proc (what a host file behind the command's
 * stdin would allow) and appends a line: "pipe" when it is no file at all. */
static int a_fd_write(int argc, char **argv) {
    pid_t pid = pid_arg(argc, argv);
    if (pid <= 0 || argc < 3) return usage("PID|self FD");
    char name[64], target[1024];
    snprintf(name, sizeof name, "fd/%.40s", argv[2]);
    int err = read_link(pid, name, target, sizeof target);
    if (err) {
        result(err, "readlink");
        return 0;
    }
    if (target[0] != '/') {
        result_word("pipe", "%s", target);
        return 0;
    }
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        result(errno, "%s", target);
        return 0;
    }
    static const char line[] = "written by dsec-probe\n";
    ssize_t n = write(fd, line, sizeof line - 1);
    result(n < 0 ? errno : 0, "%s", target);
    close(fd);
    return 0;
}

/* Watches every process of the sandbox (again and again, to catch short-lived ones such
 * as an exec helper before its execve) for a host path or host secret: MARKERs looked
 * for in cmdline, environ and the exe, cwd, root and fd links. Runs SECONDS at most, or
 * until SCAN_STOP exists. "ok" names the first leak (where, and which marker: not the
 * text, which may hold the host's secrets); "none" counts what was examined. */
static int scan_leak(pid_t pid, char **markers, int nmarkers) {
    static const char *files[] = {"cmdline", "environ"};
    static const char *links[] = {"exe", "cwd", "root"};
    static char buf[65536];
    for (size_t i = 0; i < sizeof files / sizeof *files + sizeof links / sizeof *links; i++) {
        int is_file = i < sizeof files / sizeof *files;
        const char *what = is_file ? files[i] : links[i - sizeof files / sizeof *files];
        if ((is_file ? read_proc(pid, what, buf, sizeof buf) : read_link(pid, what, buf, sizeof buf)) != 0) continue;
        for (int m = 0; m < nmarkers; m++)
            if (strstr(buf, markers[m])) {
                result(0, "pid=%d %s contains %s", pid, what, markers[m]);
                return 1;
            }
    }
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) {
        char name[48];
        snprintf(name, sizeof name, "fd/%.40s", e->d_name);
        if (e->d_name[0] == '.' || read_link(pid, name, buf, sizeof buf) != 0) continue;
        for (int m = 0; m < nmarkers && !found; m++)
            if (strstr(buf, markers[m])) {
                result(0, "pid=%d fd/%s contains %s", pid, e->d_name, markers[m]);
                found = 1;
            }
    }
    closedir(d);
    return found;
}

static int a_scan(int argc, char **argv) {
    if (argc < 3) return usage("SECONDS MARKER...");
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    double limit = atof(argv[1]);
    pid_t self = getpid();
    unsigned long examined = 0, passes = 0;
    for (;;) {
        DIR *d = opendir("/proc");
        if (!d) {
            result(errno, "/proc");
            return 0;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            pid_t pid = (pid_t)atoi(e->d_name);
            if (pid <= 0 || pid == self) continue;
            examined++;
            if (scan_leak(pid, argv + 2, argc - 2)) {
                closedir(d);
                return 0;
            }
        }
        closedir(d);
        passes++;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 >= limit) break;
        if (access(SCAN_STOP, F_OK) == 0) break;
    }
    result_word("none", "examined=%lu passes=%lu", examined, passes);
    return 0;
}

/* ---- kernel interfaces seccomp closes ---- */

static int a_init_module(int argc, char **argv) {
    static char image[64];
    report(syscall(SYS_init_module, image, sizeof image, ""));
    return 0;
}

static int a_finit_module(int argc, char **argv) {
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    report(syscall(SYS_finit_module, fd, "", 0L));
    return 0;
}

/* Flags no kernel knows: EINVAL once past the permission checks, so nothing loads. */
static int a_kexec_load(int argc, char **argv) {
    report(syscall(SYS_kexec_load, 0L, 0L, NULL, 0x7ff00000L));
    return 0;
}

/* A bad magic number: EINVAL before the capability check, so nothing reboots. */
static int a_reboot(int argc, char **argv) {
    report(syscall(SYS_reboot, 0L, 0L, 0L, NULL));
    return 0;
}

/* CLOCK_MONOTONIC cannot be set (EINVAL): only seccomp answers otherwise. */
static int a_clock_settime(int argc, char **argv) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    report(syscall(SYS_clock_settime, (long)CLOCK_MONOTONIC, &ts));
    return 0;
}

static int a_syslog(int argc, char **argv) {
    report(syscall(SYS_syslog, 10L /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0L));
    return 0;
}

static int a_acct(int argc, char **argv) {
    report(syscall(SYS_acct, NULL));
    return 0;
}

static int a_bpf_map(int argc, char **argv) {
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.map_type = BPF_MAP_TYPE_ARRAY;
    a.key_size = 4;
    a.value_size = 4;
    a.max_entries = 1;
    report(syscall(SYS_bpf, (long)BPF_MAP_CREATE, &a, sizeof a));
    return 0;
}

static int a_bpf_prog(int argc, char **argv) {
    struct bpf_insn insns[] = {
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
        {.code = BPF_JMP | BPF_EXIT},
    };
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
    a.insns = (uintptr_t)insns;
    a.insn_cnt = 2;
    a.license = (uintptr_t) "GPL";
    report(syscall(SYS_bpf, (long)BPF_PROG_LOAD, &a, sizeof a));
    return 0;
}

/* A software counter on ourselves, user space only: allowed unprivileged up to
 * perf_event_paranoid 2. */
static int a_perf_event_open(int argc, char **argv) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_SOFTWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    report(syscall(SYS_perf_event_open, &a, 0L, -1L, -1L, 0L));
    return 0;
}

static int a_io_uring_setup(int argc, char **argv) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    report(syscall(SYS_io_uring_setup, 1L, &p));
    return 0;
}

/* User-mode-only faults: allowed unprivileged whatever vm.unprivileged_userfaultfd says. */
static int a_userfaultfd(int argc, char **argv) {
    report(syscall(SYS_userfaultfd, (long)(O_CLOEXEC | UFFD_USER_MODE_ONLY)));
    return 0;
}

static int a_add_key(int argc, char **argv) {
    report(syscall(SYS_add_key, "user", "dsec-probe", "x", 1L, (long)KEY_SPEC_PROCESS_KEYRING));
    return 0;
}

static int a_keyctl(int argc, char **argv) {
    report(syscall(SYS_keyctl, (long)KEYCTL_GET_KEYRING_ID, (long)KEY_SPEC_SESSION_KEYRING, 0L));
    return 0;
}

static int a_request_key(int argc, char **argv) {
    report(syscall(SYS_request_key, "user", "dsec-probe-none", NULL, 0L));
    return 0;
}

static int a_personality(int argc, char **argv) {
    report(syscall(SYS_personality, 0x0400000L /* PER_LINUX | READ_IMPLIES_EXEC */));
    return 0;
}

/* ---- file-data ioctls ---- */

/* Sizes of the XFS argument structures (xfs_fs.h is not installed everywhere). */
#define XFS_IOC_SWAPEXT _IOWR('X', 109, char[192])
#define XFS_IOC_EXCHANGE_RANGE _IOW('X', 129, char[40])

/* ioctl NAME [hi]: the request on a file in /tmp, with bit 32 of the 64-bit register set
 * when "hi" is given (the kernel looks at the low 32 bits only; a filter must too). */
static int a_ioctl(int argc, char **argv) {
    static const struct {
        const char *name;
        unsigned long cmd;
    } reqs[] = {{"ficlone", FICLONE},         {"ficlonerange", FICLONERANGE},
                {"fideduperange", FIDEDUPERANGE}, {"fiemap", FS_IOC_FIEMAP},
                {"xfs_swapext", XFS_IOC_SWAPEXT}, {"xfs_exchange_range", XFS_IOC_EXCHANGE_RANGE}};
    if (argc < 2) return usage("ficlone|ficlonerange|fideduperange|fiemap|xfs_swapext|xfs_exchange_range [hi]");
    unsigned long cmd = 0;
    for (size_t i = 0; i < sizeof reqs / sizeof *reqs; i++)
        if (!strcmp(argv[1], reqs[i].name)) cmd = reqs[i].cmd;
    if (!cmd) return usage("ficlone|ficlonerange|fideduperange|fiemap|xfs_swapext|xfs_exchange_range [hi]");
    int hi = argc > 2 && !strcmp(argv[2], "hi");
    if (hi) cmd |= 1UL << 32;

    static char data[65536];
    memset(data, 'd', sizeof data);
    int src = open(SCRATCH "-src", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int dst = open(SCRATCH "-dst", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (src < 0 || dst < 0 || write(src, data, sizeof data) < 0 || write(dst, data, sizeof data) < 0) {
        result(errno, "scratch files in /tmp");
        return 0;
    }
    union {
        struct file_clone_range clone;
        struct {
            struct file_dedupe_range r;
            struct file_dedupe_range_info info;
        } dedupe;
        struct {
            struct fiemap m;
            struct fiemap_extent ext[8];
        } fiemap;
        char raw[256];
    } arg;
    memset(&arg, 0, sizeof arg);
    unsigned long a = (unsigned long)&arg;
    int fd = dst;
    if ((unsigned)cmd == FICLONE) {
        a = (unsigned long)src;
    } else if ((unsigned)cmd == FICLONERANGE) {
        arg.clone = (struct file_clone_range){.src_fd = src, .src_length = 4096};
    } else if ((unsigned)cmd == FIDEDUPERANGE) {
        fd = src;
        arg.dedupe.r.src_length = 4096;
        arg.dedupe.r.dest_count = 1;
        arg.dedupe.info.dest_fd = dst;
    } else if ((unsigned)cmd == FS_IOC_FIEMAP) {
        arg.fiemap.m.fm_length = ~0ULL;
        arg.fiemap.m.fm_extent_count = 8;
    }
    long r = syscall(SYS_ioctl, (long)fd, cmd, a);
    result(err_of(r), "%s%s cmd=%#lx", argv[1], hi ? "+hi" : "", cmd);
    unlink(SCRATCH "-src");
    unlink(SCRATCH "-dst");
    return 0;
}

/* ---- sockets and terminals ---- */

/* socket(2) with domain, type and protocol num[0..2]. */
static int a_socket(int argc, char **argv) {
    report(syscall(SYS_socket, self->num[0], self->num[1], self->num[2]));
    return 0;
}

static unsigned long tty_cmd;

/* In a child of its own: a new session whose controlling terminal is a fresh pty, and
 * the request (TIOCSTI pushes a byte into its input, as into a host shell's terminal). */
static int tty_child(void) {
    if (setsid() < 0) return errno;
    int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0) return errno;
    int unlock = 0, n;
    if (ioctl(m, TIOCSPTLCK, &unlock) < 0 || ioctl(m, TIOCGPTN, &n) < 0) return errno;
    char path[32];
    snprintf(path, sizeof path, "/dev/pts/%d", n);
    int s = open(path, O_RDWR | O_CLOEXEC);
    if (s < 0) return errno;
    ioctl(s, TIOCSCTTY, 0);
    char c = 'x', sub = 6 /* TIOCL_GETSHIFTSTATE */;
    long r = syscall(SYS_ioctl, (long)s, tty_cmd, (unsigned)tty_cmd == TIOCSTI ? &c : &sub);
    return r < 0 ? errno : 0;
}

static int a_tiocsti(int argc, char **argv) {
    int hi = argc > 1 && !strcmp(argv[1], "hi");
    tty_cmd = TIOCSTI | (hi ? 1UL << 32 : 0);
    in_child(tty_child, hi ? "hi" : "");
    return 0;
}

static int a_tioclinux(int argc, char **argv) {
    tty_cmd = TIOCLINUX;
    in_child(tty_child, "");
    return 0;
}

/* ---- other system call ABIs: seccomp kills the process ---- */

static int x32_child(void) {
    long r = syscall(0x40000000L | SYS_getpid);
    return r < 0 ? errno : 0;
}

static int int80_child(void) {
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L /* i386 getpid */) : "memory", "r8", "r9", "r10", "r11");
    return r < 0 && r > -4096 ? (int)-r : 0;
}

static int a_x32(int argc, char **argv) { in_child(x32_child, ""); return 0; }
static int a_int80(int argc, char **argv) { in_child(int80_child, ""); return 0; }

/* ---- limits ---- */

/* forkbomb [MAX [HOLD]]: forks children that only wait, until fork fails or MAX is
 * reached ("ok": nothing stopped it). Prints the line at once, keeps the children HOLD
 * seconds (so that a test can look at the host meanwhile), then kills them all. */
static int a_forkbomb(int argc, char **argv) {
    long max = argc > 1 ? atol(argv[1]) : 5000;
    int hold = argc > 2 ? atoi(argv[2]) : 0;
    pid_t *pids = calloc((size_t)max, sizeof *pids);
    if (!pids) {
        result(ENOMEM, "calloc");
        return 0;
    }
    long n = 0;
    int err = 0;
    fflush(stdout);
    while (n < max) {
        pid_t pid = fork();
        if (pid < 0) {
            err = errno;
            break;
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            for (;;) pause();
        }
        pids[n++] = pid;
    }
    result(err, "%ld", n);
    if (hold > 0) sleep((unsigned)hold);
    for (long i = 0; i < n; i++) kill(pids[i], SIGKILL);
    for (long i = 0; i < n; i++) waitpid(pids[i], NULL, 0);
    free(pids);
    return 0;
}

/* fill PATH [MAX]: writes until the filesystem refuses (or MAX bytes: "ok"), prints
 * the bytes written and removes the file. */
static int a_fill(int argc, char **argv) {
    if (argc < 2) return usage("PATH [MAX_BYTES]");
    unsigned long long max = argc > 2 ? strtoull(argv[2], NULL, 10) : 1ULL << 30, total = 0;
    static char chunk[1 << 20];
    memset(chunk, 'f', sizeof chunk);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        result(errno, "open %s", argv[1]);
        return 0;
    }
    int err = 0;
    while (total < max) {
        size_t want = max - total < sizeof chunk ? (size_t)(max - total) : sizeof chunk;
        ssize_t n = write(fd, chunk, want);
        if (n < 0) {
            err = errno;
            break;
        }
        total += (unsigned long long)n;
    }
    close(fd);
    unlink(argv[1]);
    result(err, "%llu", total);
    return 0;
}

/* Not attacks: the two ends of the egress throughput benchmark (scripts/bench-egress.sh),
 * here because this binary is already static and copied into sandboxes.
 * stream ADDR PORT MIB: one TCP connection (IPv4 or IPv6), MIB MiB written in 1 MiB
 * writes; prints the rate in MiB/s from connect to the last byte acknowledged by close. */
static int a_stream(int argc, char **argv) {
    if (argc < 4) return usage("ADDR PORT MIB");
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)atoi(argv[2]))};
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = a6.sin6_port};
    int v6 = strchr(argv[1], ':') != NULL;
    if ((v6 ? inet_pton(AF_INET6, argv[1], &a6.sin6_addr) : inet_pton(AF_INET, argv[1], &a4.sin_addr)) != 1)
        return usage("ADDR PORT MIB (ADDR numeric)");
    long mib = atol(argv[3]);
    static char chunk[1 << 20];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || (v6 ? connect(fd, (struct sockaddr *)&a6, sizeof a6) : connect(fd, (struct sockaddr *)&a4, sizeof a4))) {
        result(errno, "connect %s", argv[1]);
        return 0;
    }
    int err = 0;
    for (long i = 0; i < mib && !err; i++)
        for (size_t off = 0; off < sizeof chunk && !err;) {
            ssize_t n = write(fd, chunk + off, sizeof chunk - off);
            if (n < 0 && errno != EINTR) err = errno;
            if (n > 0) off += (size_t)n;
        }
    /* The peer has everything once it has read to our FIN. */
    shutdown(fd, SHUT_WR);
    while (!err && read(fd, chunk, sizeof chunk) > 0) {}
    close(fd);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    result(err, "%.1f MiB/s", (double)mib / s);
    return 0;
}

/* sink PORT: accepts TCP connections on PORT (IPv6 and IPv4) one after another and
 * reads each to its end; runs until killed. */
static int a_sink(int argc, char **argv) {
    if (argc < 2) return usage("PORT");
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)atoi(argv[1])), .sin6_addr = IN6ADDR_ANY_INIT};
    int one = 1, fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 16)) {
        result(errno, "listen %s", argv[1]);
        return 0;
    }
    static char buf[1 << 20];
    for (;;) {
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) continue;
        while (read(c, buf, sizeof buf) > 0) {}
        close(c);
    }
}

/* ---- the table ---- */

/* htons(ETH_P_ALL) as a constant (this program is x86_64 only, little-endian). */
#define ETH_ALL __builtin_bswap16(ETH_P_ALL)
static const struct attack attacks[] = {
    {"status", a_status, ""},
    {"whoami", a_whoami, ""},
    {"rlimits", a_rlimits, ""},
    {"rlimit_raise", a_rlimit_raise, "core|nofile"},
    {"statfs", a_statfs, "PATH"},
    {"capset_all", a_capset_all, ""},
    {"ambient_raise", a_ambient_raise, "[CAP]"},
    {"setuid0", a_setuid0, ""},
    {"setfcap", a_setfcap, "PATH"},
    {"mknod", a_mknod, "[PATH]"},
    {"name_to_handle_at", a_name_to_handle_at, "[PATH]"},
    {"open_by_handle_at", a_open_by_handle_at, "[PATH]"},
    {"mount_devtmpfs", a_mount, "", {"devtmpfs"}},
    {"mount_cgroup_pids", a_mount, "", {"cgroup", "pids"}},
    {"mount_cgroup2", a_mount, "", {"cgroup2"}},
    {"mount_proc", a_mount, "", {"proc"}},
    {"remount_rw", a_remount_rw, "[PATH]"},
    {"setattr_rw", a_setattr_rw, "[PATH]"},
    {"umount", a_umount, "PATH"},
    {"open_tree", a_open_tree, "[PATH]"},
    {"fsopen", a_fsopen, "[FSTYPE]"},
    {"pivot_root", a_pivot_root, ""},
    {"swapon", a_swapon, ""},
    {"open_write", a_open_write, "PATH"},
    {"open_read", a_open_read, "PATH"},
    {"chroot_escape", a_chroot_escape, ""},
    {"beneath_root", a_beneath_root, ""},
    {"template_dev", a_template_dev, ""},
    {"unshare_user", a_unshare, "", {0}, {CLONE_NEWUSER}},
    {"unshare_ns", a_unshare, "", {0}, {CLONE_NEWNS}},
    {"clone_user", a_clone, "", {0}, {CLONE_NEWUSER, 0}},
    {"clone_ns", a_clone, "", {0}, {CLONE_NEWNS, 0}},
    {"clone3", a_clone, "", {0}, {0, 1}},
    {"clone3_user", a_clone, "", {0}, {CLONE_NEWUSER, 1}},
    {"setns", a_setns, "[NSFILE]"},
    {"ptrace", a_ptrace, "PID|self|child"},
    {"vm_read", a_vm_read, "PID|self|child"},
    {"pidfd_getfd", a_pidfd_getfd, "PID|self|child"},
    {"environ", a_proc, "PID|self", {"environ"}, {0}},
    {"cmdline", a_proc, "PID|self", {"cmdline"}, {0}},
    {"exe", a_proc, "PID|self", {"exe"}, {1}},
    {"fd", a_fd, "PID|self"},
    {"fd_write", a_fd_write, "PID|self FD"},
    {"scan", a_scan, "SECONDS MARKER..."},
    {"init_module", a_init_module, ""},
    {"finit_module", a_finit_module, ""},
    {"kexec_load", a_kexec_load, ""},
    {"reboot", a_reboot, ""},
    {"clock_settime", a_clock_settime, ""},
    {"syslog", a_syslog, ""},
    {"acct", a_acct, ""},
    {"bpf_map", a_bpf_map, ""},
    {"bpf_prog", a_bpf_prog, ""},
    {"perf_event_open", a_perf_event_open, ""},
    {"io_uring_setup", a_io_uring_setup, ""},
    {"userfaultfd", a_userfaultfd, ""},
    {"add_key", a_add_key, ""},
    {"keyctl", a_keyctl, ""},
    {"request_key", a_request_key, ""},
    {"personality", a_personality, ""},
    {"ioctl", a_ioctl, "NAME [hi]"},
    {"packet", a_socket, "", {0}, {AF_PACKET, SOCK_RAW, ETH_ALL}},
    {"packet_dgram", a_socket, "", {0}, {AF_PACKET, SOCK_DGRAM, ETH_ALL}},
    {"raw", a_socket, "", {0}, {AF_INET, SOCK_RAW, IPPROTO_ICMP}},
    {"raw6", a_socket, "", {0}, {AF_INET6, SOCK_RAW, IPPROTO_ICMPV6}},
    /* What ping uses instead of a raw socket (allowed by net.ipv4.ping_group_range). */
    {"icmp_dgram", a_socket, "", {0}, {AF_INET, SOCK_DGRAM, IPPROTO_ICMP}},
    /* SOCK_RAW with flags in the same argument: a filter must mask them off. */
    {"raw_flags", a_socket, "", {0}, {AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_ICMP}},
    {"tiocsti", a_tiocsti, "[hi]"},
    {"tioclinux", a_tioclinux, ""},
    {"x32", a_x32, ""},
    {"int80", a_int80, ""},
    {"forkbomb", a_forkbomb, "[MAX [HOLD_SECONDS]]"},
    {"fill", a_fill, "PATH [MAX_BYTES]"},
    {"stream", a_stream, "ADDR PORT MIB"},
    {"sink", a_sink, "PORT"},
};

int main(int argc, char **argv) {
    if (argc >= 2)
        for (size_t i = 0; i < sizeof attacks / sizeof *attacks; i++)
            if (!strcmp(argv[1], attacks[i].name)) {
                self = &attacks[i];
                return attacks[i].fn(argc - 1, argv + 1);
            }
    fprintf(stderr, "usage: dsec-probe ATTACK [ARGS]   (inside a sandbox only)\nattacks:\n");
    for (size_t i = 0; i < sizeof attacks / sizeof *attacks; i++)
        fprintf(stderr, "  %s %s\n", attacks[i].name, attacks[i].args);
    return 2;
}
