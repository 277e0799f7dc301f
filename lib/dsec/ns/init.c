/* The init: pid 1 of a sandbox (dsec-init, tools/init/dsec-init.c, and one-shot sandboxes'
 * inits, which run it in a copy of dsec-run: init.h).
 *
 * Started by dsec-run in a fresh user namespace (root inside is an unprivileged host id)
 * and fresh mount, pid, ipc and uts namespaces (its network namespace it makes itself
 * before it is ready: until then it is dsec-run's, and nothing looks at it), in an empty
 * host directory (its cwd), in its unified and memory cgroups, with
 *   fd 3      the status pipe: one dsec_report (confine.h), err 0 once the sandbox is ready
 *   fd 4      the channel from dsec-run (a SOCK_SEQPACKET socket), which brings, once the
 *             init has set up what needs nothing of it: for a one-shot's init, a descriptor
 *             of its own oom_score_adj (receive_oom_score); the mounts for fds 5 and 6..
 *             (one byte each message, the descriptors attached); then the dsec_confinement
 *             the init applies to itself when ready, with the join files of its other v1
 *             cgroups attached (made by dsec-run meanwhile)
 *   fd 5      a mount (idmapped clone) holding the sandbox's upper/ and work/ (kept open);
 *             /dev/null until the mounts come
 *   fd 6..    the layers' mounts (idmapped clones), top first; /dev/null until then
 *   fd 6+N    after the N layers: the listening socket of exec served here (confine.h), if
 *             it is one
 *   argv      dsec-init HOSTNAME LAYERS SCRATCH_BYTES USERXATTR ROOT [BIND_DST...]   (no host path)
 *             ROOT: "pivot" when the mount namespace is a copy of the host's (pivot_root into the
 *             new root, the host's tree detached), "chroot" when it is a copy of the run
 *             directory's template (ns/root_template.h: nothing of the host's outside)
 *   cwd       b0, b1, ...: the sandbox's binds, one per BIND_DST (sandbox/bind.h), when any
 * It builds /dev and /proc on a scratch tmpfs over the cwd and brings loopback up, then
 * mounts the overlay over that (the mount lives only in this namespace), moves /dev and
 * /proc onto it, adds /tmp (the same tmpfs), pivots or chroots into the new root, joins
 * its other cgroups and enters a cgroup namespace of its own, confines itself (the sandbox's capabilities kept permitted, none
 * effective; no_new_privs, seccomp) and then reaps zombies and, when fd 6+N is a listening
 * socket, forks the commands dsec-run asks for (exec served, confine.h). Not dumpable, so nothing in the sandbox can read its memory,
 * descriptors or executable. No allocations after start-up: an idle sandbox should cost
 * the host well under a megabyte. It never returns but for a wrong start, and leaves only
 * by _exit: in a copy of dsec-run, exit() would run dsec-run's handlers and flush its
 * buffers a second time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/openat2.h>

#include "dsec/ns/confine.h"
#include "dsec/ns/init.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

enum { kStatusFd = 3, kChannelFd = 4, kUpperFd = 5, kFirstLowerFd = 6 };

/* Reports the failing step to dsec-run and exits; the parent turns it into an error record. */
static void die(const char *op, const char *path) {
    dsec_send_report(kStatusFd, errno ? errno : EIO, 0, op, path);
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
 * is first mounted on the cwd, under where the overlay goes, and reached through
 * `scratch` (its mount's descriptor); it disappears with the old root at a pivot, and
 * stays, under the overlay and outside the root, after a chroot.
 * Only descriptors and relative paths from here on: the host directories above the cwd
 * are closed to root of this namespace. */
static int scratch = -1;

static void make_scratch(const char *size) {
    static const struct {
        const char *name;
        mode_t mode;
    } dirs[] = {{"dev", 0755}, {"shm", 01777}, {"tmp", 01777}, {"empty", 0555}};
    int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0) die("fsopen", "tmpfs");
    if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
        syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
        syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        die("fsconfig tmpfs", size);
    scratch = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    if (scratch < 0) die("fsmount", "tmpfs");
    close(fs);
    if (move_mount(scratch, "", AT_FDCWD, ".", MOVE_MOUNT_F_EMPTY_PATH) < 0) die("move_mount", "scratch tmpfs");
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        if (mkdirat(scratch, dirs[i].name, dirs[i].mode) < 0) die("mkdir", dirs[i].name);
        /* mkdir honours the umask; the modes must be exact (1777 for /tmp). */
        if (fchmodat(scratch, dirs[i].name, dirs[i].mode, 0) < 0) die("chmod", dirs[i].name);
    }
}

/* Attaches a bind of scratch/`name` at `dst` (a directory under the cwd) with the given
 * mount attributes. */
static void bind_scratch(const char *name, const char *dst, unsigned long long attrs) {
    int fd = open_tree(scratch, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (fd < 0) die("open_tree", name);
    struct mount_attr attr = {.attr_set = attrs};
    if (attrs && mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) die("mount_setattr", dst);
    if (move_mount(fd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0) die("move_mount", dst);
    close(fd);
}

/* Device nodes come from outside: bind mounts of /dev/null & co. (the template namespace's
 * nodes, ns/root_template.h, or the host's) onto empty files. */
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

/* The start of a small file (a map or a status under proc) into `buf`, terminated;
 * its length, or -1 when it cannot be read. */
static ssize_t read_start(const char *path, char *buf, size_t room) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, room - 1);
    if (fd >= 0) close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

/* The line of a uid or gid map at `p` ("IN OUT COUNT") into v[0..2]; where the next line
 * starts, or NULL at the end of the map or at a line that does not read so. */
static const char *map_line(const char *p, unsigned long v[3]) {
    char *end = (char *)p;
    for (int i = 0; i < 3; i++) {
        const char *at = end;
        v[i] = strtoul(at, &end, 10);
        if (end == at) return NULL;
    }
    return v[2] ? end + strspn(end, " \n") : NULL;
}

/* ICMP echo sockets (SOCK_DGRAM, IPPROTO_ICMP) for every group of the sandbox (Docker
 * does the same): ping works without raw sockets, which the seccomp profile refuses.
 * Per network namespace: the range is worked out here and written by the namespace's
 * maker (make_net). Best effort: a kernel without the knob keeps its default.
 * The kernel keeps the range as two host ids and compares groups by host id, so the
 * range written is from the group at the lowest host id of our gid map to the one at
 * the highest: a sandbox's map (sandbox_id_map) rotates root away from the start of its
 * host range, and "0 65535" would end below where it starts (the kernel then allows no
 * group). The host's own map (--userns=host) gives 0 to 65535 as before. Returns the
 * length of the text in `range`. */
static int ping_range(char *range, size_t room) {
    unsigned long low = 0, high = 65535, min_out = ~0UL, max_end = 0;
    char map[512];
    read_start("proc/self/gid_map", map, sizeof map);
    int lines = 0;
    unsigned long v[3]; /* in, out, count */
    for (const char *p = map; (p = map_line(p, v)); lines++) {
        if (v[1] < min_out) min_out = v[1], low = v[0];
        if (v[1] + v[2] > max_end) max_end = v[1] + v[2], high = v[0] + v[2] - 1;
    }
    if (lines <= 1 || low > high) low = 0, high = 65535;
    return snprintf(range, room, "%lu %lu", low, high);
}

/* A fresh proc for the new pid namespace. */
static void mount_proc(void) {
    mkdir_or_die("proc", 0555);
    mount_or_die("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

/* Whether host uid 0 is one of our ids (--userns=host): then root here owns what the
 * host's root owns, /proc's kernel knobs included. */
static int host_root_mapped(void) {
    char map[4096]; /* a map has at most 340 lines of at most 33 bytes */
    ssize_t n = read_start("proc/self/uid_map", map, sizeof map);
    if (n <= 0 || (size_t)n == sizeof map - 1) return 1; /* unknown or cut short: assume the worst */
    unsigned long v[3]; /* in, out, count */
    const char *p = map;
    for (const char *next; *p && (next = map_line(p, v)); p = next)
        if (v[1] == 0) return 1;
    return *p != '\0'; /* a line we cannot read: assume the worst */
}

/* Whether anything in the sandbox could open `path` (read, write, or for a directory,
 * search it): we are its root, with every capability it will ever have. Its ids are not
 * the host's, so a file only the host's root may open (kpage*, kmsg, slabinfo, timer_list
 * on this kernel: mode 0400) is already shut; a mask over it would cost a mount a
 * sandbox, and every mount makes the kernel's mount hash longer for all of them, for
 * nothing. Only a refusal (EACCES) or no such entry (ENOENT) says no: any other failure
 * of the check says yes, and the mask is made. */
static int openable(const char *path, int directory) {
    int modes[] = {R_OK, W_OK, X_OK};
    for (int i = 0; i < (directory ? 3 : 2); i++) {
        if (faccessat(AT_FDCWD, path, modes[i], AT_EACCESS) == 0) return 1;
        if (errno != EACCES && errno != ENOENT) return 1;
    }
    return 0;
}

/* Whether `path` gets a mask: when this kernel has it and anything inside could open it,
 * or, when the host's root is ours, whenever it is there. */
static int needs_mask(const char *path, int directory, int host_root) {
    if (!host_root) return openable(path, directory);
    return faccessat(AT_FDCWD, path, F_OK, AT_EACCESS) == 0;
}

/* Our proc with the files that reveal or change the host masked (files: /dev/null over
 * them; directories: an empty read-only directory) where anything inside could open
 * them, and the writable kernel knobs read-only: /proc/sys always (some of its knobs
 * belong to the sandbox's own namespaces, and stay as they were made), the rest of them
 * (irq, bus, fs) when the host's root is ours, for otherwise none of their files may be
 * written by any of our ids. Entries this kernel does not have are skipped. */
static void mask_proc(void) {
    static const char *masked_files[] = {"kcore", "kallsyms", "kpagecgroup", "kpageflags", "kpagecount",
                                         "sysrq-trigger", "timer_list", "keys", "key-users",
                                         "latency_stats", "sched_debug", "timer_stats", "config.gz",
                                         "kmsg", "buddyinfo", "pagetypeinfo", "zoneinfo", "vmallocinfo",
                                         "slabinfo", "iomem", "ioports", "mtrr", "softirqs"};
    static const char *masked_dirs[] = {"acpi", "scsi", "asound", "driver", "tty/driver"};
    static const char *read_only[] = {"sys", "irq", "bus", "fs"};
    char path[64];
    int host_root = host_root_mapped();
    size_t knobs = host_root ? sizeof read_only / sizeof *read_only : 1;
    for (size_t i = 0; i < knobs; i++) {
        snprintf(path, sizeof path, "proc/%s", read_only[i]);
        if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0) {
            if (errno == ENOENT) continue;
            die("mount", path);
        }
        mount_or_die(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    }
    /* Each a read-only bind of the empty directory (not binds of one read-only bind of
     * it, which would be a mount more in every sandbox). */
    for (size_t i = 0; i < sizeof masked_dirs / sizeof *masked_dirs; i++) {
        snprintf(path, sizeof path, "proc/%s", masked_dirs[i]);
        if (needs_mask(path, 1, host_root))
            bind_scratch("empty", path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    }
    for (size_t i = 0; i < sizeof masked_files / sizeof *masked_files; i++) {
        snprintf(path, sizeof path, "proc/%s", masked_files[i]);
        if (needs_mask(path, 0, host_root)) mount_or_die("/dev/null", path, NULL, MS_BIND, NULL);
    }
}

/* On failure the kernel's own message (read from the context) names what it disliked. */
static void fsconfig_or_die(int fs, unsigned cmd, const char *key, const char *value) {
    if (syscall(SYS_fsconfig, fs, cmd, key, value, 0) == 0) return;
    int err = errno;
    char msg[192] = "";
    ssize_t n = read(fs, msg, sizeof msg - 1);
    msg[n > 0 ? n : 0] = 0;
    if (n > 0 && msg[n - 1] == '\n') msg[n - 1] = 0;
    errno = err;
    die("fsconfig overlay", n > 0 ? msg : key ? key : "create");
}

/* Attaches the mount the host handed us on `fd` at `name` under scratch/s: overlayfs takes
 * only layers that sit in our own mount namespace (they were made in one owned by the host). */
static void attach_layer(int fd, const char *name) {
    if (mkdirat(scratch, name, 0700) < 0) die("mkdir", name);
    if (move_mount(fd, "", scratch, name, MOVE_MOUNT_F_EMPTY_PATH) < 0) die("move_mount", name);
    /* The upper's stays open: with --disk its tmpfs is in no mount table once the old
     * root goes, and dsec-run snapshot reads it through /proc/<init>/fd/5. */
    if (fd != kUpperFd) close(fd);
}

/* The sandbox's root: an overlay of the layers with the writable upper, mounted by root
 * of this user namespace (so, with userxattr, it keeps its metadata in user.overlay.*
 * and files land on disk with their owners as seen inside). Layers are named through
 * the scratch tmpfs (relative paths from it), so nothing in the mount table names a host
 * path. Their mounts sit under one bind, scratch/s, which goes once the overlay holds
 * private clones of them (drop_layers). */
static int layer_mounts = -1; /* scratch/s, until drop_layers */

static void mount_overlay(int layers, int userxattr) {
    char name[32];
    int fs = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
    if (fs < 0) die("fsopen", "overlay");
    /* Paths relative to the scratch tmpfs (a copy of the template has no /proc/self). */
    if (fchdir(scratch) < 0) die("chdir", "scratch tmpfs");
    if (mkdirat(scratch, "s", 0700) < 0) die("mkdir", "s");
    bind_scratch("s", "s", 0);
    layer_mounts = open("s", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (layer_mounts < 0) die("open", "s");
    for (int i = 0; i < layers; i++) {
        snprintf(name, sizeof name, "s/l%d", i);
        attach_layer(kFirstLowerFd + i, name);
        fsconfig_or_die(fs, FSCONFIG_SET_STRING, "lowerdir+", name);
    }
    attach_layer(kUpperFd, "s/u");
    fsconfig_or_die(fs, FSCONFIG_SET_STRING, "upperdir", "s/u/upper");
    fsconfig_or_die(fs, FSCONFIG_SET_STRING, "workdir", "s/u/work");
    /* See mount/overlay.h for why: nothing an agent writes may redirect into a lower. */
    fsconfig_or_die(fs, FSCONFIG_SET_STRING, "metacopy", "off");
    fsconfig_or_die(fs, FSCONFIG_SET_STRING, "redirect_dir", "nofollow");
    fsconfig_or_die(fs, FSCONFIG_SET_STRING, "index", "off");
    if (userxattr) fsconfig_or_die(fs, FSCONFIG_SET_FLAG, "userxattr", NULL);
    /* The upper is scratch: a sandbox never outlives its init, let alone a host crash.
     * Without syncs, neither an fsync inside nor the overlay's unmount when the sandbox
     * goes waits for a writeback and cache flush of the whole host filesystem the upper
     * lies on (other tenants' dirty data included). */
    fsconfig_or_die(fs, FSCONFIG_SET_FLAG, "volatile", NULL);
    fsconfig_or_die(fs, FSCONFIG_CMD_CREATE, NULL, NULL);
    int mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
    if (mnt < 0) die("fsmount", "overlay");
    if (move_mount(mnt, "", scratch, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        die("move_mount", "/");
    if (fchdir(mnt) < 0) die("chdir", "/");
    close(mnt);
    close(fs);
}

/* Takes our own mounts of the layers and the upper away, all at once (the overlay holds
 * clones of them). Until then they hang under scratch/s beneath the root, and the upper's,
 * which we keep open on fd 5 for dsec-run snapshot, leads back up to them: detached, it
 * leads nowhere. Done before anything of the sandbox runs, but not as soon as the overlay
 * is made: the umount waits for an expedited RCU grace period, which lasts until every
 * other CPU has passed a quiescent state, and while the network child is deep in the
 * kernel making its namespace that took 0.6 ms (traced). After join_net it is gone. */
static void drop_layers(void) {
    if (layer_mounts < 0) return;
    if (fchdir(layer_mounts) < 0) die("chdir", "s");
    if (umount2(".", MNT_DETACH) < 0) die("umount2", "s");
    if (chdir("/") < 0) die("chdir", "/");
    close(layer_mounts);
}

/* The host's binds, b0, b1, ... in the start directory, were locked by the kernel when
 * this namespace was copied from the one they were attached in (sandbox/bind.h): a clone
 * keeps the lock. Cloned before anything covers them. */
enum { kMaxBinds = 64 };
static int binds[kMaxBinds];

static void take_binds(int count) {
    char name[16];
    for (int i = 0; i < count; i++) {
        snprintf(name, sizeof name, "b%d", i);
        binds[i] = open_tree(AT_FDCWD, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        if (binds[i] < 0) die("open_tree", name);
    }
}

/* `name` under `dir`, as an O_PATH descriptor, never following a symlink or crossing
 * into another mount: the image is hostile. */
static int open_beneath(int dir, const char *name, int directory) {
    struct open_how how = {.flags = O_PATH | O_CLOEXEC | (directory ? O_DIRECTORY : 0),
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
    return (int)syscall(SYS_openat2, dir, name, &how, sizeof how);
}

/* Attaches bind `i` at `dst` (absolute and checked by dsec-run) under the new root, the
 * cwd, one component at a time, making what is missing: directories on the way, and
 * the last one as a directory or an empty file as the bind's root is. */
static void attach_bind(int i, const char *dst) {
    struct stat src, at;
    if (fstat(binds[i], &src) < 0) die("fstat", dst);
    int is_dir = S_ISDIR(src.st_mode);
    int dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) die("open", "/");
    char part[256];
    for (const char *p = dst; *p;) {
        while (*p == '/') p++;
        size_t n = strcspn(p, "/");
        if (n == 0) break;
        if (n >= sizeof part) {
            errno = ENAMETOOLONG;
            die("bind destination", dst);
        }
        memcpy(part, p, n);
        part[n] = 0;
        p += n;
        int last = *p == 0;
        if (!last || is_dir) {
            if (mkdirat(dir, part, 0755) < 0 && errno != EEXIST) die("mkdir", dst);
        } else {
            int f = openat(dir, part, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (f >= 0) close(f);
            else if (errno != EEXIST) die("create", dst);
        }
        int next = open_beneath(dir, part, !last || is_dir);
        if (next < 0) die("bind destination (a symlink or a mount on the way)", dst);
        close(dir);
        dir = next;
    }
    if (fstat(dir, &at) < 0) die("fstat", dst);
    if (S_ISDIR(at.st_mode) != is_dir) {
        errno = is_dir ? ENOTDIR : EISDIR;
        die("bind destination", dst);
    }
    if (move_mount(binds[i], "", dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        die("move_mount", dst);
    close(dir);
    close(binds[i]);
}

/* Our network namespace, made by a child while we build the rest: a new one is the
 * dearest part of a sandbox's start (half a millisecond on the hosts measured, more than
 * all its mounts), and nothing needs it before we confine ourselves. The child shares our
 * memory and descriptors; it makes the namespace (owned by our user namespace, as one
 * made at our clone would be), brings its loopback up, lets our groups ping, leaves us a
 * descriptor of it in `net.ns` and exits; we wait for it and enter the namespace
 * (join_net). Sharing our memory, it shares our errno too, which our own steps read: its
 * system calls go straight to the kernel (net_call) and leave errno alone. On a failure it
 * reports to dsec-run itself and we leave without a word. Where this build has no such
 * calls, we make the namespace ourselves, in turn. */
#if defined(__x86_64__)
#define DSEC_NET_CHILD 1
static long net_call(long n, long a, long b, long c, long d) {
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    return r;
}
#elif defined(__aarch64__)
#define DSEC_NET_CHILD 1
static long net_call(long n, long a, long b, long c, long d) {
    register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b, x2 __asm__("x2") = c,
                  x3 __asm__("x3") = d;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
    return x0;
}
#else
#define DSEC_NET_CHILD 0
static long net_call(long n, long a, long b, long c, long d) {
    long r = syscall(n, a, b, c, d);
    return r < 0 ? -errno : r;
}
#endif

enum { kNetStack = 64 * 1024 };
static struct {
    int proc, sys; /* our proc and its sys/, opened before we mask, make read-only or move them */
    char ping[32]; /* the range for ping_group_range */
    int ping_len;
    int ns;        /* the new namespace, opened by the child */
    pid_t pid;     /* the child */
    char *stack;   /* its stack (the lowest page a guard), unmapped once it is gone */
} net = {-1, -1, "", 0, -1, -1, MAP_FAILED};

/* Reports the step that failed (-r: its errno) and returns 1, as the child's exit code. */
static int net_failed(long r, const char *op) {
    dsec_send_report(kStatusFd, (int)-r, 0, op, "network namespace");
    return 1;
}

static int make_net(void *unused) {
    (void)unused;
    long r = net_call(SYS_unshare, CLONE_NEWNET, 0, 0, 0);
    if (r < 0) return net_failed(r, "unshare");
    long s = net_call(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0, 0);
    if (s < 0) return net_failed(s, "socket");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, "lo", 3);
    if ((r = net_call(SYS_ioctl, s, SIOCGIFFLAGS, (long)&ifr, 0)) < 0) return net_failed(r, "SIOCGIFFLAGS lo");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if ((r = net_call(SYS_ioctl, s, SIOCSIFFLAGS, (long)&ifr, 0)) < 0) return net_failed(r, "SIOCSIFFLAGS lo");
    net_call(SYS_close, s, 0, 0, 0);
    long fd = net_call(SYS_openat, net.sys, (long)"net/ipv4/ping_group_range", O_WRONLY | O_CLOEXEC, 0);
    if (fd >= 0) {
        r = net_call(SYS_write, fd, (long)net.ping, net.ping_len, 0);
        net_call(SYS_close, fd, 0, 0, 0);
        if (r < 0) return net_failed(r, "write /proc/sys/net/ipv4/ping_group_range");
    }
    long ns = net_call(SYS_openat, net.proc, (long)"self/ns/net", O_RDONLY | O_CLOEXEC, 0);
    if (ns < 0) return net_failed(ns, "open");
    net.ns = (int)ns;
    return 0;
}

/* The child starts queued on our CPU whenever the others were busy at the clone (on two
 * CPUs, dsec-run is at work on the other one), and an idle CPU does not take it from us
 * soon: traced, it waited there 0.9 ms while the other CPU idled, then ran while we waited
 * in turn. So it is moved to another CPU allowed us (what a change of its affinity does at
 * once), then allowed all of them again: kept off ours, it had to wait whenever that other
 * CPU was busy (with 10,000 sandboxes alive, with the kernel's teardown of the one before:
 * creates took up to three times as long, now and then). Where we have one CPU, or the
 * call fails, it stays where the kernel put it. */
static void net_elsewhere(void) {
    cpu_set_t allowed;
    int cpu = sched_getcpu();
    if (cpu < 0 || sched_getaffinity(0, sizeof allowed, &allowed) < 0 || !CPU_ISSET(cpu, &allowed) ||
        CPU_COUNT(&allowed) < 2)
        return;
    cpu_set_t elsewhere = allowed;
    CPU_CLR(cpu, &elsewhere);
    if (sched_setaffinity(net.pid, sizeof elsewhere, &elsewhere) == 0)
        (void)sched_setaffinity(net.pid, sizeof allowed, &allowed);
}

static void start_net(void) {
    net.proc = open("proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (net.proc < 0) die("open", "/proc");
    net.sys = openat(net.proc, "sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (net.sys < 0) die("open", "/proc/sys");
    net.ping_len = ping_range(net.ping, sizeof net.ping);
    if (!DSEC_NET_CHILD) {
        if (make_net(NULL) != 0) _exit(1);
        return;
    }
    size_t page = (size_t)getpagesize();
    net.stack = mmap(NULL, kNetStack + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (net.stack == MAP_FAILED || mprotect(net.stack, page, PROT_NONE) < 0) die("mmap", "network namespace");
    /* No exit signal: we wait for it alone (__WCLONE), and no SIGCHLD is left pending. */
    net.pid = clone(make_net, net.stack + page + kNetStack, CLONE_VM | CLONE_FILES, NULL);
    if (net.pid < 0) die("clone", "network namespace");
    net_elsewhere();
}

static void join_net(void) {
    if (DSEC_NET_CHILD) {
        int status;
        while (waitpid(net.pid, &status, __WCLONE) < 0)
            if (errno != EINTR) die("waitpid", "network namespace");
        munmap(net.stack, kNetStack + (size_t)getpagesize());
        if (WIFSIGNALED(status)) {
            errno = EINTR;
            die("killed", "network namespace");
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || net.ns < 0) _exit(1); /* it reported why */
    }
    close(net.sys);
    close(net.proc);
    if (net.ns >= 0) {
        if (DSEC_NET_CHILD && setns(net.ns, CLONE_NEWNET) < 0) die("setns", "network namespace");
        close(net.ns);
    }
}

/* The signals we were started ignored (what our creator ignored, such as dsec-run's
 * SIGPIPE), which a command we fork would keep across its execve: read once from our own
 * /proc, so that each command resets only those. All of them while unknown. */
static unsigned long long ignored_signals = ~0ULL;
static void note_ignored_signals(void) {
    char status[4096];
    if (read_start("proc/self/status", status, sizeof status) <= 0) return;
    const char *at = strstr(status, "\nSigIgn:");
    if (at) ignored_signals = strtoull(at + strlen("\nSigIgn:"), NULL, 16);
}

/* What needs only our ids, done while dsec-run makes our mounts and the rest of what we
 * need: the scratch tmpfs over the cwd (our cwd from here on), /dev and /proc on it (moved
 * onto the new root once there is one), the hostname; our network namespace is being made
 * meanwhile (make_net). */
static void set_up_early(int argc, char **argv) {
    const char *hostname = argv[1];
    /* Nothing below may propagate back to the host's mount table. */
    mount_or_die(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
    take_binds(argc - 6);
    make_scratch(argv[3]);
    if (fchdir(scratch) < 0) die("chdir", "scratch tmpfs");
    mount_proc();
    start_net();
    make_dev();
    mask_proc();
    note_ignored_signals();
    if (sethostname(hostname, strlen(hostname)) < 0) die("sethostname", hostname);
}

/* Moves the mount on scratch/`name` (with those on it) onto `name` under the cwd, made
 * with `mode` when missing. */
static void move_from_scratch(const char *name, mode_t mode) {
    mkdir_or_die(name, mode);
    int fd = open_tree(scratch, name, OPEN_TREE_CLOEXEC);
    if (fd < 0) die("open_tree", name);
    if (move_mount(fd, "", AT_FDCWD, name, MOVE_MOUNT_F_EMPTY_PATH) < 0) die("move_mount", name);
    close(fd);
}

/* The new root: the overlay of the mounts dsec-run sent (fds 5, 6..), /dev and /proc moved
 * onto it, /tmp and the binds; then we pivot or chroot into it. */
static void set_up_root(int argc, char **argv) {
    int chroot_only = strcmp(argv[5], "chroot") == 0;
    int bind_count = argc - 6;
    mount_overlay(atoi(argv[2]), atoi(argv[4]));
    move_from_scratch("dev", 0755);
    move_from_scratch("proc", 0555);
    mkdir_or_die("tmp", 01777);
    bind_scratch("tmp", "tmp", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    for (int i = 0; i < bind_count; i++) attach_bind(i, argv[6 + i]);
    close(scratch);
    if (chroot_only) {
        /* A copy of the template, which holds nothing of the host's: the new root moves
         * onto the namespace's root, then we chroot into it. pivot_root would walk every
         * thread on the host (one per idle sandbox) to move their roots; this does not.
         * Stacked on the namespace's root, the new root has no mountpoint to climb to:
         * ".." at it stays there, so a chroot escape (chroot into a subdirectory, then
         * ".." from outside it) ends where it began, as after a pivot; and setns into the
         * namespace lands on it (the kernel looks "/" up through the mounts on it). What
         * lies beneath (the template's tmpfs, our scratch tmpfs) is reachable by no path. */
        if (mount(".", "/", NULL, MS_MOVE, NULL) < 0) die("mount --move", "/");
        if (chroot(".") < 0) die("chroot", "/");
    } else {
        /* The classic pivot: the old root ends up stacked under the new one, then goes. */
        if (syscall(SYS_pivot_root, ".", ".") < 0) die("pivot_root", "/");
        if (umount2(".", MNT_DETACH) < 0) die("umount2", "old root");
        /* Our layers' mounts went with it. */
        close(layer_mounts);
        layer_mounts = -1;
    }
    if (chdir("/") < 0) die("chdir", "/");
    /* Our stdio was the host's /dev/null: now the sandbox's own, so /proc/1/fd holds
     * nothing that was opened outside. */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) die("open", "/dev/null");
    for (int fd = 0; fd < 3; fd++)
        if (dup2(null, fd) < 0) die("dup2", "/dev/null");
    close(null);
}

/* The descriptors `msg` brought into `fds` (*count of them, at most `room`; any beyond
 * are closed). Returns how many it brought. */
static int take_fds(struct msghdr *msg, int *fds, int room, int *count) {
    int all = 0;
    *count = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
        for (size_t k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++, all++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof fd);
            if (*count < room) fds[(*count)++] = fd;
            else close(fd);
        }
    }
    return all;
}

/* One message from dsec-run on the channel: its bytes into `buf` (at most `len`, all of
 * it or we die) and its descriptors, close-on-exec, into `fds` (*count of them, at most
 * `room`). Returns the bytes. */
enum { kMaxFdsPerMessage = 253 /* SCM_MAX_FD */ };
static size_t receive(void *buf, size_t len, int *fds, int room, int *count, const char *what) {
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(kMaxFdsPerMessage * sizeof(int))];
    } control;
    struct iovec iov = {buf, len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.bytes,
                         .msg_controllen = sizeof control.bytes};
    ssize_t n;
    while ((n = recvmsg(kChannelFd, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (n <= 0) {
        if (n == 0) errno = EPIPE;
        die("receive", what);
    }
    if (take_fds(&msg, fds, room, count) > room || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        errno = EMSGSIZE;
        die("receive", what);
    }
    return (size_t)n;
}

/* The upper's and the layers' mounts, in their slots (fds 5, 6..). */
static void receive_mounts(int count) {
    int got = 0;
    while (got < count) {
        int fds[kMaxFdsPerMessage], n;
        char byte;
        receive(&byte, 1, fds, kMaxFdsPerMessage, &n, "sandbox mounts");
        if (n == 0 || got + n > count) {
            errno = EPROTO;
            die("receive", "sandbox mounts");
        }
        for (int i = 0; i < n; i++, got++) {
            if (dup3(fds[i], kUpperFd + got, O_CLOEXEC) < 0) die("dup3", "sandbox mounts");
            close(fds[i]);
        }
    }
}

/* A one-shot's init, a copy of dsec-run, forks commands that cannot write their own
 * oom_score_adj (run_command): the memory they share with us until their execve was made
 * in the host's user namespace and is not dumpable, so its /proc files are host root's.
 * dsec-run hands such an init a descriptor of its own oom_score_adj instead (one message
 * before the mounts), through which it raises it to 1000 around each fork, for the child
 * to inherit, and puts its own value back after (lowering to a value it had needs no
 * privilege). Elsewhere -1: the commands write theirs. */
static int oom_fd = -1;
static char oom_own[16];
static ssize_t oom_own_len;

static void receive_oom_score(void) {
    int fds[1], n;
    char byte;
    receive(&byte, 1, fds, 1, &n, "oom_score_adj");
    if (n != 1) {
        errno = EPROTO;
        die("receive", "oom_score_adj");
    }
    oom_fd = fds[0];
    oom_own_len = pread(oom_fd, oom_own, sizeof oom_own, 0);
    if (oom_own_len <= 0) die("read", "oom_score_adj");
}

/* 1: the value a command is forked with; 0: ours back. */
static void command_oom_score(int raised) {
    if (oom_fd < 0) return;
    if (raised) (void)!pwrite(oom_fd, "1000", 4, 0);
    else (void)!pwrite(oom_fd, oom_own, (size_t)oom_own_len, 0);
}

/* The record dsec-run made while we set up (static: too big for the stack's taste). */
static struct dsec_confinement confinement;

/* The confinement record, with the join files of our other v1 cgroups: we join them and
 * then enter a cgroup namespace of our own, rooted at our cgroups. dsec-run sends the
 * record up to the end of its seccomp program, not the room after it (33 KiB in all,
 * nearly all of it room for the largest program): the pages of the rest are never
 * touched, so each idle sandbox's init keeps about 24 KiB less. */
static void receive_late(void) {
    int fds[DSEC_INIT_MAX_JOINS], n;
    size_t got = receive(&confinement, sizeof confinement, fds, DSEC_INIT_MAX_JOINS, &n, "confinement");
    size_t head = offsetof(struct dsec_confinement, seccomp);
    if (got < head || confinement.seccomp_bytes > sizeof confinement.seccomp ||
        got != head + confinement.seccomp_bytes) {
        errno = EPROTO;
        die("receive", "confinement");
    }
    close(kChannelFd);
    for (int i = 0; i < n; i++) {
        char file[192];
        if (write(fds[i], "0", 1) < 0) die("join cgroup", dsec_fd_path(fds[i], file, sizeof file));
        close(fds[i]);
    }
    if (unshare(CLONE_NEWCGROUP) < 0) die("unshare", "cgroup namespace");
}

/* Our limits once confined, which every command we fork starts with. */
static struct rlimit own_limits[DSEC_EXEC_NLIMITS];
static int own_limits_known;
static void note_own_limits(void) {
    for (int r = 0; r < DSEC_EXEC_NLIMITS; r++)
        if (getrlimit(r, &own_limits[r]) < 0) return;
    own_limits_known = 1;
}

/* Exec served by us (confine.h): a command forked from the init inherits its namespaces,
 * cgroups, limits and confinement, so dsec-run need not join them and confine it anew. */
enum { kMaxClients = 64 };
static struct {
    int fd;    /* the connection, -1: a free slot */
    pid_t pid; /* its command, once started */
    int ends;  /* its command is the one-shot's own (DSEC_EXEC_ENDS_SANDBOX) */
} clients[kMaxClients];

static int listening(int fd) {
    int on = 0;
    socklen_t len = sizeof on;
    return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on;
}

static void drop_client(int i) {
    close(clients[i].fd);
    clients[i].fd = -1;
    clients[i].pid = 0;
    clients[i].ends = 0;
}

static void reply(int i, const void *what, size_t len, int fd) {
    struct iovec iov = {(void *)what, len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    if (fd >= 0) {
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof control.buf;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    }
    (void)sendmsg(clients[i].fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Our effective set made what we hold permitted (the sandbox's set) of `want`: none as
 * we run, CAP_KILL for a kill of a command of root's that may have changed its ids since
 * we forked it, all in a child before its execve. Returns 0, or -1 with errno set. */
static int effective_caps(uint64_t want) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &header, data) < 0) return -1;
    data[0].effective = data[0].permitted & (uint32_t)want;
    data[1].effective = data[1].permitted & (uint32_t)(want >> 32);
    return (int)syscall(SYS_capset, &header, data);
}

/* What the command's child works with, laid out by the parent in the request's buffer.
 * The child runs on a stack of its own, in a copy of our memory, and we do not wait for
 * its execve: between its clone and its execve it is root of the sandbox, so any process
 * inside may stop it (kill -STOP -1), and a parent waiting for it (vfork) would stop
 * with it: no exec served, no child reaped, no session killed, every dsec-run exec into
 * the sandbox waiting for our answer. Only a one-shot's own command, which comes before
 * anything else runs inside, runs in our memory (CLONE_VM | CLONE_VFORK) until its
 * execve, writing nothing of ours but errno and sh[1]. */
struct command {
    mode_t umask;
    int nice;
    const struct dsec_exec_request *req; /* the caller's limits and CPUs */
    const char *workdir;
    char **argv, **envp, **candidates, **sh;
    size_t ncand;
    int fds[DSEC_EXEC_NFDS]; /* stdin, stdout, stderr, failure pipe */
};

static int run_command(void *arg) {
    const struct command *c = arg;
    struct dsec_exec_failure failure = {DSEC_STAGE_CONFINE, 0};
    setsid();
    for (int k = 0; k < 3; k++)
        if (dup2(c->fds[k], k) < 0) goto fail;
    /* Nothing of ours goes with it (our upper's mount above all), only the failure pipe
     * (close-on-exec) until the execve. */
    if (c->fds[3] > 3) syscall(SYS_close_range, 3U, (unsigned)c->fds[3] - 1, 0U);
    syscall(SYS_close_range, (unsigned)c->fds[3] + 1, ~0U, 0U);
    /* As the join helper does: the OOM killer picks commands before us. */
    int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (adj >= 0) {
        (void)!write(adj, "1000", 4);
        close(adj);
    }
    umask(c->umask);
    (void)setpriority(PRIO_PROCESS, 0, c->nice);
    /* The caller's limits and CPUs, as a command joined from outside inherits them; the
     * sandbox's own (core, nofile, fsize) stay ours, and no hard limit goes above ours.
     * Ours (known since we were ready) are the child's now: only those that differ are set. */
    for (int r = 0; r < DSEC_EXEC_NLIMITS; r++) {
        if (r == RLIMIT_CORE || r == RLIMIT_NOFILE || r == RLIMIT_FSIZE) continue;
        struct rlimit want = {c->req->limits[r].cur, c->req->limits[r].max};
        if (!own_limits_known) {
            (void)dsec_lower_rlimit(r, want);
            continue;
        }
        if (want.rlim_max > own_limits[r].rlim_max) want.rlim_max = own_limits[r].rlim_max;
        if (want.rlim_cur > want.rlim_max) want.rlim_cur = want.rlim_max;
        if (want.rlim_cur != own_limits[r].rlim_cur || want.rlim_max != own_limits[r].rlim_max)
            (void)setrlimit(r, &want);
    }
    if (c->req->cpus_bytes > 0 && c->req->cpus_bytes <= DSEC_EXEC_CPUSET_BYTES)
        (void)syscall(SYS_sched_setaffinity, 0, (size_t)c->req->cpus_bytes, c->req->cpus);
    /* Root of the sandbox enters the directory with its capabilities, as a joined command
     * does and as its execve gives them back (we run with none): one only its owner may
     * enter included. */
    failure.stage = DSEC_STAGE_CHDIR;
    if (effective_caps(~0ULL) < 0 || chdir(c->workdir) < 0) goto fail;
    /* Every signal as a new program expects it: none blocked (we block all), none ignored
     * (we inherited dsec-run's SIGPIPE ignored, among what our creator ignored; we handle
     * none, and the execve resets what a copy of dsec-run still handles). */
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP && (sig > 64 || (ignored_signals >> (sig - 1) & 1)))
            signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    failure.stage = DSEC_STAGE_EXEC;
    errno = dsec_exec_candidates(c->candidates, c->ncand, c->argv, c->envp, c->sh);
fail:
    failure.err = errno;
    (void)!write(c->fds[3], &failure, sizeof failure);
    _exit(failure.stage == DSEC_STAGE_EXEC && failure.err == ENOENT ? 127 : 126);
}

/* The request in `buf` (checked) as the child's arguments; the pointers go in `room`,
 * which holds 2 * (argc + envc + ncand) + 8 of them. */
static void lay_out(char *buf, char **room, const int *fds, struct command *c) {
    const struct dsec_exec_request *req = (const void *)buf;
    char *at = buf + sizeof *req;
    c->umask = (mode_t)(req->umask & 0777);
    c->nice = req->nice;
    c->req = req;
    c->workdir = at;
    at += strlen(at) + 1;
    c->argv = room;
    c->envp = c->argv + req->argc + 1;
    c->candidates = c->envp + req->envc + 1;
    char **lists[3] = {c->argv, c->envp, c->candidates};
    uint32_t counts[3] = {req->argc, req->envc, req->ncand};
    for (int l = 0; l < 3; l++) {
        for (uint32_t k = 0; k < counts[l]; k++, at += strlen(at) + 1) lists[l][k] = at;
        lists[l][counts[l]] = NULL;
    }
    c->ncand = req->ncand;
    c->sh = c->candidates + req->ncand + 1;
    c->sh[0] = "/bin/sh";
    c->sh[1] = NULL;
    memcpy(c->sh + 2, c->argv + 1, req->argc * sizeof(char *)); /* argv[1..] and its NULL */
    memcpy(c->fds, fds, sizeof c->fds);
}

/* The child's stack: made per command and unmapped once the clone has returned (a copy's
 * own stays with the copy; a one-shot's own command has exec'd by then), so that an init
 * keeps nothing of it between commands. */
enum { kChildStack = 64 * 1024 };

/* Our /proc, opened before anything else ran inside (before the ready report): a /proc
 * mounted over it later (by a sandbox given CAP_SYS_ADMIN) does not change what we see.
 * -1: opened at each look. */
static int proc_dir = -1;

/* Calls fn(pid, fields, arg) for each process in our pid namespace but us, with
 * `fields` the part of its /proc/PID/stat after the command name ("state ppid pgrp
 * session ..."; the name may hold anything, so from the last ')'), until fn returns
 * nonzero; returns that, 0 when none did, -1 when /proc or a process's stat cannot be
 * read (but for a process gone meanwhile): a process inside may lower our limit of open
 * files to hide from us. With getdents64 and stack buffers: no allocation here. */
static int each_process(int (*fn)(int pid, const char *fields, void *arg), void *arg) {
    int dir = proc_dir;
    if (dir >= 0 && lseek(dir, 0, SEEK_SET) < 0) return -1;
    if (dir < 0 && (dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) return -1;
    char buf[4096], path[64], stat[512];
    int found = 0, unreadable = 0;
    long n;
    /* An unreadable one does not stop the walk: kill_session needs every other. */
    while (!found && (n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0)
        for (long off = 0; off < n && !found;) {
            const char *name = buf + off + 19; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
            off += *(const unsigned short *)(buf + off + 16);
            if (name[0] < '1' || name[0] > '9' || strcmp(name, "1") == 0) continue;
            snprintf(path, sizeof path, "%s/stat", name);
            int fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                unreadable |= errno != ENOENT && errno != ESRCH;
                continue; /* else gone meanwhile */
            }
            ssize_t len = read(fd, stat, sizeof stat - 1);
            int read_err = errno;
            close(fd);
            unreadable |= len < 0 && read_err != ESRCH;
            if (len <= 0) continue;
            stat[len] = 0;
            const char *close_paren = strrchr(stat, ')');
            if (close_paren) found = fn(atoi(name), close_paren + 1, arg);
        }
    if (dir != proc_dir) close(dir);
    if (found) return found;
    return n < 0 || unreadable ? -1 : 0;
}

/* A process that entered the sandbox from outside (an exec or session joined by setns,
 * dsec-run cp): its parent is outside our pid namespace, so its PPid reads 0. */
static int joined_from_outside(int pid, const char *fields, void *arg) {
    (void)pid, (void)arg;
    char state;
    int ppid;
    return sscanf(fields, " %c %d", &state, &ppid) == 2 && ppid == 0;
}

/* Whether a process entered the sandbox from outside; when /proc cannot be read, as
 * if one had. */
static int anyone_joined(void) { return each_process(joined_from_outside, NULL) != 0; }

/* A member of the session `*arg`: killed. */
static int kill_if_in_session(int pid, const char *fields, void *arg) {
    char state;
    int ppid, pgrp, session;
    if (sscanf(fields, " %c %d %d %d", &state, &ppid, &pgrp, &session) == 4 && session == *(const int *)arg)
        kill(pid, SIGKILL);
    return 0;
}

/* A served command's tree, as dsec-run's kill_session takes it (sandbox/exec.cc): its
 * process group and whatever kept its session (it started one). */
static void kill_session(pid_t leader) {
    effective_caps(1ULL << CAP_KILL);
    kill(-leader, SIGKILL);
    each_process(kill_if_in_session, &leader);
    effective_caps(0);
}

/* A message on connection `i`: its command, or its end (EOF). */
static void serve_request(int i) {
    char *buf = mmap(NULL, DSEC_EXEC_MAX_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct dsec_exec_started started = {ENOMEM, 0};
    if (buf == MAP_FAILED) {
        reply(i, &started, sizeof started, -1);
        drop_client(i);
        return;
    }
    struct iovec iov = {buf, DSEC_EXEC_MAX_BYTES};
    union {
        char buf[CMSG_SPACE(DSEC_EXEC_NFDS * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    ssize_t n = recvmsg(clients[i].fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    int fds[DSEC_EXEC_NFDS], nfds = 0;
    if (n > 0) take_fds(&msg, fds, DSEC_EXEC_NFDS, &nfds);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        munmap(buf, DSEC_EXEC_MAX_BYTES);
        return;
    }
    /* One well-formed request per connection: every string ends in a NUL and there are
     * as many as the header says. Anything else, or the end, closes it. */
    const struct dsec_exec_request *req = (const void *)buf;
    size_t strings = 0;
    int ok = n >= (ssize_t)sizeof *req && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && nfds == DSEC_EXEC_NFDS &&
             clients[i].pid == 0 && req->magic == DSEC_EXEC_MAGIC && req->bytes == (size_t)n - sizeof *req &&
             req->argc > 0 && req->bytes > 0 && buf[n - 1] == '\0';
    for (ssize_t k = (ssize_t)sizeof *req; ok && k < n; k++) strings += buf[k] == '\0';
    if (!ok || strings != 1 + (size_t)req->argc + req->envc + req->ncand) {
        if (n > 0) {
            started.err = EINVAL;
            reply(i, &started, sizeof started, -1);
        }
        for (int k = 0; k < nfds; k++) close(fds[k]);
        munmap(buf, DSEC_EXEC_MAX_BYTES);
        /* The caller of a command still running went away: dsec-run killed (on any other
         * way out it kills the command's session itself, or waits for its end). Nobody
         * waits for its status or reads its output any more, so it goes as dsec-run would
         * have ended it, rather than run on unseen in a sandbox that lives on. */
        if (clients[i].pid > 0) kill_session(clients[i].pid);
        drop_client(i);
        return;
    }
    int ends = (req->flags & DSEC_EXEC_ENDS_SANDBOX) != 0; /* read before buf goes */
    size_t room = (2 * ((size_t)req->argc + req->envc + req->ncand) + 8) * sizeof(char *);
    char **ptrs = mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *child_stack = mmap(NULL, kChildStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    int pidfd = -1;
    pid_t pid = -1;
    errno = ENOMEM;
    if (ptrs != MAP_FAILED && child_stack != MAP_FAILED) {
        struct command c;
        lay_out(buf, ptrs, fds, &c);
        /* A one-shot's own command: back once it has exec'd or given up, no copy of our
         * page tables for it. Any other: back at once (struct command above). */
        int flags = CLONE_PIDFD | SIGCHLD | (ends ? CLONE_VM | CLONE_VFORK : 0);
        command_oom_score(1);
        pid = clone(run_command, child_stack + kChildStack, flags, &c, &pidfd);
        command_oom_score(0);
    }
    started.err = pid < 0 ? errno : 0;
    if (child_stack != MAP_FAILED) munmap(child_stack, kChildStack);
    if (ptrs != MAP_FAILED) munmap(ptrs, room);
    for (int k = 0; k < nfds; k++) close(fds[k]);
    munmap(buf, DSEC_EXEC_MAX_BYTES);
    if (pid < 0) {
        reply(i, &started, sizeof started, -1);
        drop_client(i);
        return;
    }
    clients[i].pid = pid;
    clients[i].ends = ends;
    started.pid = pid;
    reply(i, &started, sizeof started, pidfd);
    close(pidfd);
}

/* A one-shot sandbox's init (dsec_init_main_one_shot), and whether the one-shot's own
 * command (DSEC_EXEC_ENDS_SANDBOX) has ended. */
static int one_shot, own_ended;

/* The listening socket, once serving. */
static int listen_fd = -1;

static int any_process(int pid, const char *fields, void *arg) {
    (void)pid, (void)fields, (void)arg;
    return 1;
}

/* No connection but `except` (-1: none), and none waiting to be accepted. */
static int no_connection_but(int except) {
    for (int i = 0; i < kMaxClients; i++)
        if (i != except && clients[i].fd >= 0) return 0;
    struct pollfd p = {listen_fd, POLLIN, 0};
    return listen_fd < 0 || poll(&p, 1, 0) == 0;
}

/* Nothing at work in the sandbox but connection `except`: no other connection, none
 * waiting, no process but us (ours or joined; a process whose stat, or a /proc, we
 * cannot read counts as one). */
static int alone_but(int except) { return no_connection_but(except) && each_process(any_process, NULL) == 0; }

/* Reaps whatever has died: a served command's status goes to its connection. A
 * one-shot's own command with nothing else at work: we leave at once, and say so
 * (DSEC_EXEC_INIT_LEAVES), so that dsec-run need not wait for the sandbox's teardown. */
static void reap(void) {
    for (;;) {
        siginfo_t info;
        info.si_pid = 0;
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG) < 0 || info.si_pid == 0) return;
        for (int i = 0; i < kMaxClients; i++)
            if (clients[i].fd >= 0 && clients[i].pid == info.si_pid) {
                struct dsec_exec_ended ended = {info.si_code, info.si_status, 0};
                int leaving = one_shot && clients[i].ends && alone_but(i);
                if (leaving) ended.flags = DSEC_EXEC_INIT_LEAVES;
                reply(i, &ended, sizeof ended, -1);
                if (leaving) _exit(0);
                own_ended |= clients[i].ends;
                drop_client(i);
            }
    }
}

/* A one-shot init leaves once the one-shot's own command has ended, so the sandbox's
 * namespaces go while dsec-run is still reading the command's output, before it comes to
 * destroy the sandbox (whatever is left inside dies with us, as it would then). The
 * status is queued on the command's connection, which dsec-run reads after we are gone.
 * Anything else at work in the sandbox keeps us, for destroy to end it after marking the
 * teardown, as exec's "sandbox destroyed during exec" note expects: another connection
 * (an exec served or about to be), one still in the listen queue, a process that
 * entered from outside. */
static void leave_if_done(void) {
    if (one_shot && own_ended && no_connection_but(-1) && !anyone_joined()) _exit(0);
}

/* Serves exec requests on `listener` and reaps; returns only if it cannot start. */
static void serve(int listener, const sigset_t *all) {
    int sfd = signalfd(-1, all, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) return;
    listen_fd = listener;
    for (int i = 0; i < kMaxClients; i++) clients[i].fd = -1;
    for (;;) {
        leave_if_done();
        struct pollfd p[2 + kMaxClients];
        int which[kMaxClients], n = 2;
        p[0] = (struct pollfd){sfd, POLLIN, 0};
        p[1] = (struct pollfd){listener, POLLIN, 0};
        for (int i = 0; i < kMaxClients; i++)
            if (clients[i].fd >= 0) {
                which[n - 2] = i;
                p[n++] = (struct pollfd){clients[i].fd, POLLIN, 0};
            }
        if (poll(p, (nfds_t)n, -1) < 0) continue;
        if (p[0].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) > 0) {
            }
            reap();
        }
        for (int k = 2; k < n; k++)
            if (p[k].revents && clients[which[k - 2]].fd >= 0) serve_request(which[k - 2]);
        if (p[1].revents & POLLIN) {
            int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (c < 0) continue;
            /* Only from outside the sandbox: a process of ours would have a pid here. */
            struct ucred peer;
            socklen_t len = sizeof peer;
            int slot = -1;
            if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.pid == 0)
                for (int i = 0; i < kMaxClients && slot < 0; i++)
                    if (clients[i].fd < 0) slot = i;
            if (slot < 0) {
                close(c);
                continue;
            }
            clients[slot].fd = c;
            clients[slot].pid = 0;
        }
    }
}

int dsec_init_main_one_shot(int argc, char **argv) {
    one_shot = 1;
    return dsec_init_main(argc, argv);
}

int dsec_init_main(int argc, char **argv) {
    /* Before anything else: nothing in the sandbox may ptrace us or read /proc/1/{mem,fd,exe,environ}. */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (argc < 6 || argc > 6 + kMaxBinds || getpid() != 1 || (strcmp(argv[5], "chroot") && strcmp(argv[5], "pivot"))) {
        fprintf(stderr, "dsec-init: started by dsec-run only (as pid 1 of a new pid namespace)\n");
        return 2;
    }
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    /* dsec-run started us in the (empty) directory to build the root at. */
    set_up_early(argc, argv);
    if (one_shot) receive_oom_score();
    receive_mounts(1 + atoi(argv[2]));
    set_up_root(argc, argv);
    receive_late();
    join_net();
    drop_layers();
    const char *op = "";
    if (dsec_confine(&confinement, &op) < 0) die(op, "");
    note_own_limits();
    /* The sandbox's capabilities stay permitted, for the commands we fork to get back at
     * their execve (as root of the sandbox); we use none ourselves. */
    if (effective_caps(0) < 0) die("capset", "");
    /* Ready: from now on a sandbox that lives on outlives the dsec-run thread that started
     * us (cleared before the report, which lets that thread go on and end). A one-shot's
     * init does not: its dsec-run destroys the sandbox on every way out but SIGKILL, and
     * once that has killed it, nobody reads the command's output or status, and the
     * command would run on for ever; dying with it leaves the sandbox with a dead init,
     * which dsec-reclaim gc destroys. Set again, as the confinement's setresuid clears it;
     * had dsec-run died before that, the report finds its pipe without a reader. */
    prctl(PR_SET_PDEATHSIG, one_shot ? SIGKILL : 0, 0, 0, 0);
    proc_dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dsec_send_report(kStatusFd, 0, 0, "ok", "") < 0 && one_shot) _exit(1);
    close(kStatusFd);
    int listener = kFirstLowerFd + atoi(argv[2]);
    if (listening(listener)) serve(listener, &all);
    /* Reap whatever dies in here: orphans of exec'd commands are reparented to us. */
    for (;;) {
        siginfo_t info;
        if (sigwaitinfo(&all, &info) == SIGCHLD)
            while (waitpid(-1, NULL, WNOHANG) > 0) {
            }
    }
}
