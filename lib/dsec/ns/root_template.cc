#include "dsec/ns/root_template.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "dsec/ns/helper_stack.h"
#include "dsec/sys/fs.h"

namespace dsec::ns {

namespace {
constexpr long kNsfsMagic = 0x6e736673;

// The template as a descriptor, when `path` is a bind of a mount namespace's nsfs file.
Fd open_template(const std::string& path) {
    struct statfs sf;
    if (::statfs(path.c_str(), &sf) < 0 || sf.f_type != kNsfsMagic) return Fd();
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd || ::ioctl(fd.get(), NS_GET_NSTYPE) != CLONE_NEWNS) return Fd();
    return fd;
}

constexpr const char* kNodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

// "/dev/NODE" and "dev/NODE" (under the template's root, our cwd).
void node_paths(const char* node, char (&host)[32], char (&ours)[32]) {
    std::strcpy(host, "/dev/");
    std::strcat(host, node);
    std::strcpy(ours, "dev/");
    std::strcat(ours, node);
}

// The six nodes, made as the host's are (same device, same mode) on a tmpfs of their own
// at dev/, the one mount of the template that allows devices, read-only once made. Binds
// of the host's nodes would be six mounts, which every sandbox's namespace copies.
// Returns 0, or the errno of the failing step with nothing left mounted: EPERM or EACCES
// where no device node may be made here (no CAP_MKNOD in the host's user namespace, a
// security module). Raw system calls only (make_template).
int make_nodes() {
    if (::mount("dev", "dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=4k,nr_inodes=16") < 0) return errno;
    for (const char* node : kNodes) {
        char host[32], ours[32];
        node_paths(node, host, ours);
        struct stat st;
        if (::stat(host, &st) < 0 || !S_ISCHR(st.st_mode) ||
            ::mknod(ours, S_IFCHR | (st.st_mode & 0777), st.st_rdev) < 0) {
            int err = errno ? errno : ENODEV;
            ::umount2("dev", MNT_DETACH);
            return err;
        }
    }
    if (::mount(nullptr, "dev", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, nullptr) < 0) {
        int err = errno;
        ::umount2("dev", MNT_DETACH);
        return err;
    }
    return 0;
}

// The fallback: binds of the host's nodes onto empty files. Returns the failing step, or
// nullptr.
const char* bind_host_nodes() {
    for (const char* node : kNodes) {
        char host[32], ours[32];
        node_paths(node, host, ours);
        int fd = ::open(ours, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
        if (fd < 0) return "create template /dev node";
        ::close(fd);
        if (::mount(host, ours, nullptr, MS_BIND, nullptr) < 0) return "bind template /dev node";
    }
    return nullptr;
}

struct MakeArgs {
    const char* dir;  // a host directory: the template root's mount point while it is made
    int ns_fd = -1;   // out: the new namespace
    int err = 0;      // out: errno of the failing step, with its name
    const char* op = "";
    HelperStack* stack;
};

// Runs as pid 1 of a new pid namespace, in a new mount namespace (a copy of the host's),
// sharing our memory and descriptor table until it exits: builds the template's root and
// pivots into it. Raw system calls only.
int make_template(void* p) {
    auto* a = static_cast<MakeArgs*>(p);
    a->stack->entered();
    auto failed = [a](const char* op) {
        a->err = errno ? errno : EIO;
        a->op = op;
        ::_exit(1);
    };
    ::umask(0);  // our own fs_struct: the modes below are exact
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0) failed("mount / private");
    // The host's proc is still here: "self" is this process.
    a->ns_fd = ::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    if (a->ns_fd < 0) failed("open /proc/self/ns/mnt");
    if (::mount("dsec-root", a->dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k") < 0)
        failed("mount template tmpfs");
    if (::chdir(a->dir) < 0) failed("chdir template");
    if (::mkdir("dev", 0755) < 0 || ::mkdir("proc", 0555) < 0 || ::mkdir("r", 0755) < 0) failed("mkdir template");
    // The nodes the inits bind into their /dev: made on a tmpfs of their own, or where no
    // device node may be made here, binds of the host's.
    int err = make_nodes();
    if (err == EPERM || err == EACCES) {
        if (const char* op = bind_host_nodes()) failed(op);
    } else if (err) {
        errno = err;
        failed("make template /dev nodes");
    }
    // Of this pid namespace, which holds only us, and nothing once we exit.
    if (::mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) < 0) failed("mount template proc");
    if (::mount(nullptr, ".", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) < 0)
        failed("remount template read-only");
    // The one pivot_root of the run directory: the host's tree goes.
    if (::syscall(SYS_pivot_root, ".", ".") < 0) failed("pivot_root template");
    if (::umount2(".", MNT_DETACH) < 0) failed("umount template's old root");
    ::_exit(0);
}

// One template namespace, made by a child cloned on the CPU this thread runs on now.
Result<Fd> make_once(const std::string& dir) {
    HelperStack stack;
    if (stack.base == MAP_FAILED) return fail(sys_error("mmap", "template helper stack"));
    MakeArgs args{dir.c_str(), -1, 0, "", &stack};
    pid_t pid = ::clone(make_template, stack.top(), CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_NEWNS | CLONE_NEWPID | SIGCHLD,
                        &args);
    stack.returned();
    if (pid < 0) return fail(sys_error("clone", "template mount namespace"));
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    Fd ns(args.ns_fd);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fail(errno_error(args.err ? args.err : EIO, args.op, "the run directory's template mount namespace"));
    return ns;
}

// Keeps `ns` alive as a bind of its nsfs file at `path`. The kernel refuses (EINVAL) to
// bind a mount namespace into one whose id is not lower, and since 6.18 hands out ids
// from per-CPU batches: a namespace made on another CPU than ours was may have a lower
// one. Returns false on that refusal.
Result<bool> keep(const Fd& ns, const std::string& path) {
    std::string self = "/proc/self/fd/" + std::to_string(ns.get());
    if (::mount(self.c_str(), path.c_str(), nullptr, MS_BIND, nullptr) == 0) return true;
    if (errno == EINVAL) return false;
    return fail(sys_error("mount", path).context("keeping the template mount namespace"));
}

Result<Fd> make(const std::string& run_dir, const std::string& path) {
    std::string dir = run_dir + "/rootns.d";
    if (auto r = fs::mkdir_p(dir, 0700); !r) return fail(r.error());
    if (Fd f(::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600)); !f) return fail(sys_error("create", path));
    // First where we are, then on each CPU in turn (the one our namespace's id came from
    // hands out higher ones), back to our own CPUs after.
    cpu_set_t allowed;
    if (::sched_getaffinity(0, sizeof allowed, &allowed) < 0) return fail(sys_error("sched_getaffinity"));
    struct Restore {
        const cpu_set_t& set;
        bool pinned = false;
        ~Restore() {
            if (pinned) (void)::sched_setaffinity(0, sizeof set, &set);
        }
    } restore{allowed};
    for (int cpu = -1; cpu < CPU_SETSIZE; cpu++) {
        if (cpu >= 0) {
            if (!CPU_ISSET(cpu, &allowed)) continue;
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            if (::sched_setaffinity(0, sizeof one, &one) < 0) continue;
            restore.pinned = true;
        }
        auto ns = make_once(dir);
        if (!ns) return fail(ns.error());
        auto kept = keep(*ns, path);
        if (!kept) return fail(kept.error());
        if (*kept) return std::move(*ns);
    }
    return fail(errno_error(EINVAL, "mount", path).context("keeping the template mount namespace"));
}
}  // namespace

Result<Fd> root_template(const std::string& run_dir) {
    std::string path = run_dir + "/rootns", unusable = run_dir + "/rootns.unusable";
    if (Fd fd = open_template(path)) return fd;
    // A host where it could not be made once will not make it at the next create either
    // (a security module refusing a step, CPUs withheld from us): each try costs a
    // pivot_root per CPU, so the reason is kept and creates go without the template.
    auto why = [&](const std::string& text) {
        return fail(make_error(Code::unsupported, "no template mount namespace here: " + text, unusable));
    };
    if (auto text = fs::read_file(unusable)) return why(*text);
    auto held = fs::lock(run_dir + "/rootns.lock");
    if (!held) return fail(held.error());
    if (Fd fd = open_template(path)) return fd;
    auto made = make(run_dir, path);
    if (!made) {
        (void)fs::atomic_write(unusable, made.error().describe() + "\n");
        return fail(made.error());
    }
    return made;
}

}  // namespace dsec::ns
