/* dsec-init: pid 1 of a sandbox.
 *
 * Started by dsec-run in fresh mount, pid, net, ipc, uts and cgroup namespaces with
 *   fd 3  the sandbox's overlay, a detached mount (fsmount/open_tree)
 *   fd 4  the status pipe: "ok\n" once the sandbox is ready, or "op\tpath\terrno\n"
 *   fd 5  (optional) the --disk tmpfs under the overlay's upper, held open for good
 *   argv  dsec-init ROOT HOSTNAME
 * It attaches the overlay at ROOT (a directory that exists on the host; the mount lives
 * only in this namespace), builds /dev, /proc and /tmp (one tmpfs for all of them), brings loopback up, pivots into
 * the new root and then does nothing but reap zombies. No libc++ and no allocations after
 * start-up: an idle sandbox should cost the host well under a megabyte.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kMountFd = 3, kStatusFd = 4 };

/* Reports the failing step to dsec-run and exits; the parent turns it into an error record. */
static void die(const char *op, const char *path) {
    int err = errno;
    dprintf(kStatusFd, "%s\t%s\t%d\n", op, path ? path : "", err);
    _exit(1);
}

static void mount_or_die(const char *src, const char *dst, const char *type, unsigned long flags,
                         const char *data) {
    if (mount(src, dst, type, flags, data) < 0) die("mount", dst);
}

static void mkdir_or_die(const char *path, mode_t mode) {
    if (mkdir(path, mode) < 0 && errno != EEXIST) die("mkdir", path);
}

/* One tmpfs serves /dev, /dev/shm, /tmp and the empty read-only directories that mask
 * parts of /proc, each a bind of one of its subdirectories. Every superblock costs the
 * host more than its memory: the kernel keeps a shrinker per superblock and, in every
 * memory cgroup, an array indexed by shrinker, so creating a sandbox gets slower as
 * sandboxes accumulate; one tmpfs instead of seven keeps that growth small. The tmpfs
 * is first mounted at ROOT, under where the overlay goes, and reached through `scratch`
 * (an O_PATH fd of its root); it disappears with the old root at the pivot. */
static int scratch = -1;

static void make_scratch(const char *root) {
    static const struct {
        const char *name;
        mode_t mode;
    } dirs[] = {{"dev", 0755}, {"shm", 01777}, {"tmp", 01777}, {"empty", 0555}};
    mount_or_die("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
    scratch = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (scratch < 0) die("open", root);
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        if (mkdirat(scratch, dirs[i].name, dirs[i].mode) < 0) die("mkdir", dirs[i].name);
        /* mkdir honours the umask; the modes must be exact (1777 for /tmp). */
        if (fchmodat(scratch, dirs[i].name, dirs[i].mode, 0) < 0) die("chmod", dirs[i].name);
    }
}

/* Attaches a bind of scratch/`name` at `dst` (a directory under the new root) with the
 * given mount attributes. */
static void bind_scratch(const char *name, const char *dst, unsigned long long attrs) {
    int fd = open_tree(scratch, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (fd < 0) die("open_tree", name);
    struct mount_attr attr = {.attr_set = attrs};
    if (attrs && mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) die("mount_setattr", dst);
    if (move_mount(fd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0) die("move_mount", dst);
    close(fd);
}

/* Device nodes come from the host: bind mounts of /dev/null & co. onto empty files. */
static void make_dev(void) {
    static const char *nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
    static const char *links[][2] = {{"fd", "/proc/self/fd"},   {"stdin", "/proc/self/fd/0"},
                                     {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
                                     {"ptmx", "pts/ptmx"}};
    char src[64], dst[64];
    mkdir_or_die("dev", 0755);
    bind_scratch("dev", "dev", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) {
        snprintf(src, sizeof src, "/dev/%s", nodes[i]);
        snprintf(dst, sizeof dst, "dev/%s", nodes[i]);
        int fd = open(dst, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
        if (fd < 0) die("create", dst);
        close(fd);
        mount_or_die(src, dst, NULL, MS_BIND, NULL);
    }
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        snprintf(dst, sizeof dst, "dev/%s", links[i][0]);
        if (symlink(links[i][1], dst) < 0) die("symlink", dst);
    }
    mkdir_or_die("dev/pts", 0755);
    mount_or_die("devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620");
    mkdir_or_die("dev/shm", 01777);
    bind_scratch("shm", "dev/shm", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
}

/* A fresh proc for the new pid namespace, with the files that reveal or change the host
 * masked (files: /dev/null over them; directories: an empty read-only directory) and the
 * writable kernel knobs read-only. */
static void make_proc(void) {
    static const char *masked_files[] = {"kcore", "kallsyms", "kpagecgroup", "kpageflags", "kpagecount",
                                         "sysrq-trigger", "timer_list", "keys", "key-users",
                                         "latency_stats", "sched_debug", "timer_stats", "config.gz",
                                         "kmsg", "buddyinfo", "pagetypeinfo", "zoneinfo", "vmallocinfo",
                                         "slabinfo", "iomem", "ioports", "mtrr", "softirqs"};
    static const char *masked_dirs[] = {"acpi", "scsi", "asound", "driver", "fs/nfsd", "tty/driver"};
    static const char *read_only[] = {"sys", "irq", "bus", "fs", "sysvipc"};
    char path[64];
    mkdir_or_die("proc", 0555);
    mount_or_die("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    for (size_t i = 0; i < sizeof read_only / sizeof *read_only; i++) {
        snprintf(path, sizeof path, "proc/%s", read_only[i]);
        if (access(path, F_OK) != 0) continue;
        mount_or_die(path, path, NULL, MS_BIND | MS_REC, NULL);
        mount_or_die(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    }
    for (size_t i = 0; i < sizeof masked_dirs / sizeof *masked_dirs; i++) {
        snprintf(path, sizeof path, "proc/%s", masked_dirs[i]);
        if (access(path, F_OK) == 0)
            bind_scratch("empty", path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    }
    for (size_t i = 0; i < sizeof masked_files / sizeof *masked_files; i++) {
        snprintf(path, sizeof path, "proc/%s", masked_files[i]);
        if (access(path, F_OK) == 0) mount_or_die("/dev/null", path, NULL, MS_BIND, NULL);
    }
}

static void loopback_up(void) {
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) die("socket", "lo");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strcpy(ifr.ifr_name, "lo");
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) die("SIOCGIFFLAGS", "lo");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) die("SIOCSIFFLAGS", "lo");
    close(s);
}

static void set_up(const char *root, const char *hostname) {
    /* Nothing below may propagate back to the host's mount table. */
    mount_or_die(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
    make_scratch(root);
    if (move_mount(kMountFd, "", AT_FDCWD, root, MOVE_MOUNT_F_EMPTY_PATH) < 0) die("move_mount", root);
    close(kMountFd);
    if (chdir(root) < 0) die("chdir", root);
    make_dev();
    make_proc();
    mkdir_or_die("tmp", 01777);
    bind_scratch("tmp", "tmp", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    close(scratch);
    if (sethostname(hostname, strlen(hostname)) < 0) die("sethostname", hostname);
    loopback_up();
    /* The classic pivot: the old root ends up stacked under the new one, then goes. */
    if (syscall(SYS_pivot_root, ".", ".") < 0) die("pivot_root", root);
    if (umount2(".", MNT_DETACH) < 0) die("umount2", "old root");
    if (chdir("/") < 0) die("chdir", "/");
}

int main(int argc, char **argv) {
    if (argc != 3 || getpid() != 1) {
        fprintf(stderr, "dsec-init: started by dsec-run only (as pid 1 of a new pid namespace)\n");
        return 2;
    }
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    set_up(argv[1], argv[2]);
    if (write(kStatusFd, "ok\n", 3) != 3) _exit(1);
    close(kStatusFd);
    /* Reap whatever dies in here: orphans of exec'd commands are reparented to us. */
    for (;;) {
        siginfo_t info;
        if (sigwaitinfo(&all, &info) == SIGCHLD)
            while (waitpid(-1, NULL, WNOHANG) > 0) {
            }
    }
}
