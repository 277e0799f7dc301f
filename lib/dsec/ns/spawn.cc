#include "dsec/ns/spawn.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "dsec/mount/overlay.h"
#include "dsec/ns/bind_stage.h"
#include "dsec/ns/confinement.h"
#include "dsec/ns/idrange.h"
#include "dsec/ns/init.h"
#include "dsec/ns/root_template.h"
#include "dsec/sys/fdpass.h"
#include "dsec/sys/fs.h"

namespace dsec::ns {

namespace {
// Descriptors the child keeps until execve sit at or above this, clear of the numbers
// it gives the init's descriptors (at most kInitFirstLowerFd + kMaxLowers).
constexpr int kHighFd = 512;
static_assert(kInitFirstLowerFd + int(mount::kMaxLowers) < kHighFd);
// Descriptors per message, within what SCM_RIGHTS carries.
constexpr size_t kFdsPerMessage = 250;
static_assert(kFdsPerMessage <= kMaxFdsPerMessage);

// The program's argument strings (remember_command_line): one block, NUL-separated.
char* g_args = nullptr;
size_t g_args_len = 0;

// What the child works with: everything prepared before clone3, so it never allocates.
struct Child {
    const InitSpec* spec;
    int status, sock, devnull;
    int exec_listen;  // -1: none
    int exe;  // dsec-init, opened by the parent (copied from the template), else -1
    const char* exe_path;
    bool in_process;  // no execve: the init's code runs here (init.h)
    size_t mounts;  // the upper and the layers, whose slots hold /dev/null until they come
    char* const* argv;
    int argc;
    const int* keep;  // sorted: every other inherited descriptor is closed first thing
    size_t keep_count;
};

[[noreturn]] void child_fail(const Child& c, const char* op, const char* path = "") {
    dsec_send_report(c.status, errno ? errno : EIO, 0, op, path);
    ::_exit(127);
}

// Waits for the parent's word that our ids are mapped (one byte, nothing else).
void await_ids(const Child& c) {
    char byte;
    ssize_t n;
    while ((n = ::recv(c.sock, &byte, 1, 0)) < 0 && errno == EINTR) {
    }
    if (n != 1) child_fail(c, "wait for the id maps");
}

// The init without an execve (init.h): what the execve of dsec-init would have done to
// this copy of dsec-run, then the init's code. Our descriptors beyond its own are closed
// (none has close-on-exec to do it), our signal handlers go back to their defaults (what
// we ignore stays ignored, as across an execve), and the name and command line that every
// process inside can read are dsec-init's. Our memory is not readable from inside: the
// init makes itself undumpable first thing, and only a ptracer with CAP_SYS_PTRACE over
// the host's user namespace (where this memory was made) could read it.
[[noreturn]] void become_init(const Child& c, int first_unused) {
    ::syscall(SYS_close_range, unsigned(first_unused), ~0U, 0U);
    for (int sig : {SIGINT, SIGTERM, SIGWINCH}) ::signal(sig, SIG_DFL);
    ::prctl(PR_SET_NAME, "dsec-init", 0, 0, 0);
    if (g_args) {
        std::memset(g_args, 0, g_args_len);
        std::memcpy(g_args, "dsec-init", std::min(g_args_len - 1, sizeof "dsec-init" - 1));
    }
    // In a copy of us only for a one-shot sandbox (CreateOptions::init_in_process): its
    // init leaves once the one-shot's own command has ended (init.h).
    ::_exit(dsec_init_main_one_shot(c.argc, const_cast<char**>(c.argv)));
}

[[noreturn]] void run_child(const Child& c) {
    const InitSpec& spec = *c.spec;
    // In particular the host's end of our socket and those of other sandboxes being made
    // by other threads at the same time, so that each child sees EOF if its parent dies.
    dsec_close_all_but(c.keep, c.keep_count);
    for (int fd : spec.join_fds) {
        char file[192];
        if (::write(fd, "0", 1) < 0) child_fail(c, "join cgroup", dsec_fd_path(fd, file, sizeof file));
    }
    // Held here until the host has mapped our ids; the init receives its mounts.
    await_ids(c);
    // Still host root for these: the directories above are closed to root of the sandbox.
    // Copied from the host's tree, dsec-init is opened here, in our own copy of the
    // mounts: its mount goes with the host's tree at the pivot, and its path with it.
    // Copied from the template, there is no host path here: the parent opened it.
    int exe = c.exe;
    if (exe < 0 && !c.in_process) {
        int low_exe = ::open(c.exe_path, O_PATH | O_CLOEXEC);
        if (low_exe < 0) child_fail(c, "open", "dsec-init");
        exe = ::fcntl(low_exe, F_DUPFD_CLOEXEC, kHighFd);
        if (exe < 0) child_fail(c, "fcntl", "F_DUPFD_CLOEXEC");
        ::close(low_exe);
    }
    const char* start_dir = spec.root_template >= 0 ? kTemplateStartDir : spec.root_dir.c_str();
    if (::chdir(start_dir) < 0) child_fail(c, "chdir", "sandbox root");
    if (spec.userns) {
        // Become root of the new namespace (host id host_uid), not host root seen from it.
        if (::syscall(SYS_setgroups, 0, nullptr) < 0) child_fail(c, "setgroups");
        if (::syscall(SYS_setresgid, 0, 0, 0) < 0) child_fail(c, "setresgid");
        if (::syscall(SYS_setresuid, 0, 0, 0) < 0) child_fail(c, "setresuid");
    }
    // Until it reports ready, the init dies with the thread that starts it (the setuid
    // above would have cleared this); it clears it itself once ready.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) child_fail(c, "prctl", "PR_SET_PDEATHSIG");
    // Room for many layers' descriptors, twice over while they are renumbered.
    struct rlimit nofile;
    if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &nofile);
    }
    if (::dup2(c.devnull, 0) < 0 || ::dup2(c.devnull, 1) < 0 || ::dup2(c.devnull, 2) < 0 ||
        ::dup2(c.status, kInitStatusFd) < 0 || ::dup2(c.sock, kInitChannelFd) < 0)
        child_fail(c, "dup2");
    for (size_t i = 0; i < c.mounts; i++)
        if (::dup2(c.devnull, kInitUpperFd + int(i)) < 0) child_fail(c, "dup2");
    int after = kInitUpperFd + int(c.mounts);
    if (c.exec_listen >= 0 && ::dup2(c.exec_listen, after++) < 0) child_fail(c, "dup2");
    if (c.in_process) become_init(c, after);
    // Everything else goes at execve (the executable's own descriptor is still needed).
    ::syscall(SYS_close_range, unsigned(after), ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
    char* envp[] = {nullptr};
    ::syscall(SYS_execveat, exe, "", c.argv, envp, AT_EMPTY_PATH);
    child_fail(c, "execve", "dsec-init");
}

Status write_map(int pid, const char* file, const IdMap& map) {
    std::string path = "/proc/" + std::to_string(pid) + "/" + file;
    std::string line = map.text();
    Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd || ::write(fd.get(), line.data(), line.size()) != ssize_t(line.size())) return fail(sys_error("write", path));
    return {};
}

// Sets `attrs` on a detached mount, and shifts its ids into the sandbox's user namespace
// when `userns` >= 0.
Status set_mount_attrs(int tree, const std::string& what, int userns, uint64_t attrs) {
    struct mount_attr attr = {};
    attr.attr_set = attrs | (userns >= 0 ? MOUNT_ATTR_IDMAP : 0);
    attr.userns_fd = uint64_t(userns >= 0 ? userns : 0);
    if (::syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
        Error e = sys_error("mount_setattr", what);
        if (userns >= 0 && (e.err == EINVAL || e.err == EPERM))
            e = std::move(e).context("this filesystem or kernel does not support idmapped mounts (needed for "
                                     "unprivileged sandboxes; --userns=host is the unsafe way round)");
        return fail(std::move(e));
    }
    return {};
}

// A private clone of a mount (or of a directory, as a bind), read-only if asked, its ids
// shifted into the sandbox's user namespace when `userns` >= 0.
Result<Fd> clone_mount(int dirfd, const std::string& path, int userns, uint64_t attrs) {
    int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (path.empty() ? AT_EMPTY_PATH : 0);
    Fd tree(int(::syscall(SYS_open_tree, dirfd, path.c_str(), flags)));
    if (!tree) return fail(sys_error("open_tree", path));
    if (auto r = set_mount_attrs(tree.get(), path, userns, attrs); !r) return fail(r.error());
    return tree;
}

// The upper's own detached tmpfs (--disk), not a clone of it: the init attaches it, so
// no descriptor of ours is the last of a mount still detached. Closing such a last one
// unmounts it and waits for an expedited RCU grace period (10 ms per create measured
// under load, for the clone's original).
Result<Fd> own_mount(int mount, int userns, uint64_t attrs) {
    Fd tree(::fcntl(mount, F_DUPFD_CLOEXEC, 0));
    if (!tree) return fail(sys_error("fcntl", "F_DUPFD_CLOEXEC"));
    if (auto r = set_mount_attrs(tree.get(), "upper", userns, attrs); !r) return fail(r.error());
    return tree;
}

// Maps the child's ids (with its own user namespace) and tells it so: it goes on setting
// itself up as root of its namespace.
Status map_ids(const InitSpec& spec, int pid, int sock) {
    if (spec.userns) {
        IdMap map = sandbox_id_map(spec.host_uid, spec.id_count);
        if (auto r = write_map(pid, "uid_map", map); !r) return r;
        if (auto r = write_map(pid, "gid_map", map); !r) return r;
    }
    while (::send(sock, "", 1, MSG_NOSIGNAL) < 0)
        if (errno != EINTR) return fail(sys_error("send", "id maps written"));
    return {};
}

// Sends one message: `data`, with `fds` attached (at most kFdsPerMessage).
Status send_with_fds(int sock, std::string_view data, const int* fds, size_t k, const char* what) {
    struct iovec iov = {const_cast<char*>(data.data()), data.size()};
    if (send_fds(sock, &iov, 1, fds, k) < 0) return fail(sys_error("sendmsg", what));
    return {};
}

// Makes the sandbox's mounts and sends them to the child: the upper first, then layers.
Status send_mounts(const InitSpec& spec, const InitUpper& own, int pid, int sock) {
    Fd userns;
    if (spec.userns) {
        std::string ns = "/proc/" + std::to_string(pid) + "/ns/user";
        userns.reset(::open(ns.c_str(), O_RDONLY | O_CLOEXEC));
        if (!userns) return fail(sys_error("open", ns));
    }
    std::vector<Fd> mounts;
    auto upper = own.mount ? own_mount(own.mount.get(), userns.get(), MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID)
                           : clone_mount(AT_FDCWD, own.dir, userns.get(), MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
    if (!upper) return fail(upper.error());
    mounts.push_back(std::move(*upper));
    for (auto& lower : spec.lowers) {
        auto m = clone_mount(AT_FDCWD, lower, userns.get(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
        if (!m) return fail(m.error());
        // Still the layer that create checked was mounted there: one unmounted since
        // (lazily, say) leaves its bare mountpoint, whose clone is an empty lower and the
        // sandbox a root without files that runs no command.
        struct stat tree, parent;
        if (::fstat(m->get(), &tree) < 0) return fail(sys_error("fstat", lower));
        if (::stat((lower + "/..").c_str(), &parent) < 0) return fail(sys_error("stat", lower + "/.."));
        if (tree.st_dev == parent.st_dev)
            return fail(make_error(Code::not_mounted, "layer is not mounted any more (unmounted since it was checked)", lower));
        mounts.push_back(std::move(*m));
    }
    std::vector<int> fds;
    for (auto& m : mounts) fds.push_back(m.get());
    for (size_t at = 0; at < fds.size(); at += kFdsPerMessage)
        if (auto r = send_with_fds(sock, std::string_view("", 1), fds.data() + at,
                                   std::min(kFdsPerMessage, fds.size() - at), "sandbox mounts");
            !r)
            return r;
    return {};
}

// Sends what `late` made: the confinement record (the part in use: the seccomp program's
// room beyond its size stays behind) with the v1 join files attached.
Status send_late(const InitLate& late, int sock) {
    if (!late.confinement) return fail(make_error(Code::bad_input, "start_init: no confinement"));
    const dsec_confinement& conf = *late.confinement;
    if (conf.seccomp_bytes > sizeof conf.seccomp)
        return fail(make_error(Code::bad_input, "start_init: seccomp program larger than its room"));
    if (late.join.size() > DSEC_INIT_MAX_JOINS) return fail(make_error(Code::bad_input, "start_init: too many cgroups to join"));
    size_t used = offsetof(dsec_confinement, seccomp) + conf.seccomp_bytes;
    std::vector<int> fds;
    for (auto& f : late.join) fds.push_back(f.get());
    return send_with_fds(sock, std::string_view(reinterpret_cast<const char*>(&conf), used), fds.data(), fds.size(),
                         "confinement");
}

Fd high(int fd) { return Fd(fd < 0 ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, kHighFd)); }
}  // namespace

void remember_command_line(int argc, char** argv) {
    // The kernel lays them out one after the other; anything else is left alone.
    for (int i = 0; i + 1 < argc; i++)
        if (!argv[i] || argv[i + 1] != argv[i] + std::strlen(argv[i]) + 1) return;
    if (argc < 1 || !argv[0]) return;
    char* last = argv[argc - 1];
    g_args = argv[0];
    g_args_len = size_t(last + std::strlen(last) + 1 - argv[0]);
}

bool init_in_process_possible() { return g_args != nullptr && g_args_len > sizeof "dsec-init"; }

int sandbox_namespaces() { return CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS; }

Result<Started> start_init(const InitSpec& spec) {
    if (!spec.upper || !spec.late) return fail(make_error(Code::bad_input, "start_init: no upper or confinement to make"));
    if (spec.lowers.size() > mount::kMaxLowers) return fail(mount::too_many_layers_error(spec.lowers.size()));
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    Fd status_r(p[0]), status_w(p[1]);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return fail(sys_error("socketpair"));
    Fd sock(sv[0]), child_sock(sv[1]);
    // Room for the confinement record in one message: the default is room enough; a
    // host's smaller one is raised where it allows.
    int room = 0, want = int(2 * sizeof(dsec_confinement));
    socklen_t len = sizeof room;
    if (::getsockopt(sock.get(), SOL_SOCKET, SO_SNDBUF, &room, &len) == 0 && room < want)
        (void)::setsockopt(sock.get(), SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
    Fd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!devnull) return fail(sys_error("open", "/dev/null"));
    Fd h_status = high(status_w.get()), h_sock = high(child_sock.get()), h_null = high(devnull.get());
    Fd h_listen;
    if (spec.exec_listen >= 0 && !(h_listen = high(spec.exec_listen)))
        return fail(sys_error("fcntl", "F_DUPFD_CLOEXEC"));
    // In process only where the command line can be hidden (init_in_process_possible).
    bool in_process = spec.in_process && init_in_process_possible();
    Fd h_exe;
    if (spec.root_template >= 0 && !in_process) {
        Fd exe(::open(spec.exe_path.c_str(), O_PATH | O_CLOEXEC));
        if (!exe) return fail(sys_error("open", spec.exe_path));
        h_exe = high(exe.get());
    }
    // EINVAL: the descriptor limit (ulimit -n) is at or below kHighFd, which is running
    // out of descriptors as much as EMFILE is, and says so.
    if (!h_status || !h_sock || !h_null || (spec.root_template >= 0 && !in_process && !h_exe))
        return fail(errno == EINVAL ? errno_error(EMFILE, "fcntl", "F_DUPFD_CLOEXEC " + std::to_string(kHighFd))
                                    : sys_error("fcntl", "F_DUPFD_CLOEXEC"));
    // Only the child's copies stay: a child that dies closes the last of its ends, and a
    // message to it then fails (EPIPE) at once.
    status_w.reset();
    child_sock.reset();
    devnull.reset();

    // Everything the child touches is prepared here: it may not allocate.
    std::vector<char*> argv;
    for (auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<int> keep = spec.join_fds;
    keep.insert(keep.end(), {h_status.get(), h_sock.get(), h_null.get()});
    if (h_exe) keep.push_back(h_exe.get());
    if (h_listen) keep.push_back(h_listen.get());
    std::sort(keep.begin(), keep.end());
    Child child{&spec,
                h_status.get(),
                h_sock.get(),
                h_null.get(),
                h_listen ? h_listen.get() : -1,
                h_exe ? h_exe.get() : -1,
                spec.exe_path.c_str(),
                in_process,
                1 + spec.lowers.size(),
                argv.data(),
                int(spec.argv.size()),
                keep.data(),
                keep.size()};

    int pidfd = -1;
    struct clone_args args;
    std::memset(&args, 0, sizeof args);
    // All but the network namespace, which the init has made while it sets up (init.c,
    // make_net): the dearest of them, made on another CPU than the rest.
    args.flags = uint64_t(sandbox_namespaces() & ~CLONE_NEWNET) | (spec.userns ? CLONE_NEWUSER : 0) | CLONE_PIDFD;
    args.pidfd = uint64_t(uintptr_t(&pidfd));
    args.exit_signal = SIGCHLD;
    if (spec.unified_cgroup_fd >= 0) {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = uint64_t(spec.unified_cgroup_fd);
    }
    // The init's mount namespace is copied from the template's (no pivot_root for it to
    // take, root_template.h) or the host's. Binds are copied in with the rest, and so locked.
    BindStage stage;
    if (auto r = stage.enter(spec.root_template, spec.root_template >= 0 ? kTemplateStartDir : spec.root_dir, spec.binds);
        !r)
        return fail(r.error());
    long pid = ::syscall(SYS_clone3, &args, sizeof args);
    if (pid > 0) stage.leave();
    if (pid < 0) {
        Error e = sys_error("clone3", "new namespaces");
        if (spec.userns && (e.err == EPERM || e.err == ENOSPC))
            e = std::move(e).context("cannot create a user namespace (user.max_user_namespaces, or a policy "
                                     "forbidding them)");
        return fail(std::move(e));
    }
    if (pid == 0) run_child(child);

    Started started{int(pid), Fd(pidfd)};
    h_status.reset();
    h_sock.reset();
    auto abort = [&](Error e) -> Result<Started> {
        ::kill(started.pid, SIGKILL);
        while (::waitpid(started.pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        // Its own report when it failed first (a message to it then fails for that reason).
        int queued = 0;
        if (::ioctl(status_r.get(), FIONREAD, &queued) == 0 && size_t(queued) >= sizeof(dsec_report))
            if (auto r = read_report(status_r.get(), "setting up the sandbox"); !r) return fail(r.error());
        return fail(std::move(e));
    };
    // The child sets up what needs no more than its ids (its scratch tmpfs, /dev, /proc,
    // loopback) while we make its mounts and what `late` makes (init.c).
    if (auto r = map_ids(spec, started.pid, sock.get()); !r) return abort(r.error());
    // An init in a copy of us raises its own oom_score_adj for each command it forks
    // (init.c, receive_oom_score): the commands cannot write theirs.
    if (in_process) {
        std::string file = "/proc/" + std::to_string(started.pid) + "/oom_score_adj";
        Fd adj(::open(file.c_str(), O_RDWR | O_CLOEXEC));
        if (!adj) return abort(sys_error("open", file));
        int fd = adj.get();
        if (auto r = send_with_fds(sock.get(), std::string_view("", 1), &fd, 1, "oom_score_adj"); !r)
            return abort(r.error());
    }
    auto upper = spec.upper();
    if (!upper) return abort(upper.error());
    if (auto r = send_mounts(spec, *upper, started.pid, sock.get()); !r) return abort(r.error());
    *upper = {};
    auto late = spec.late();
    if (!late) return abort(late.error());
    if (auto r = send_late(*late, sock.get()); !r) return abort(r.error());
    *late = {};
    sock.reset();
    if (spec.while_starting) spec.while_starting();
    if (auto r = read_report(status_r.get(), "setting up the sandbox"); !r) return abort(r.error());
    return started;
}

}  // namespace dsec::ns
