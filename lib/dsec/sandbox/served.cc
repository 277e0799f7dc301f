#include "dsec/sandbox/served.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <algorithm>

#include "dsec/ns/confine.h"
#include "dsec/sys/fdpass.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/process.h"

namespace dsec::sandbox {

namespace {
// The socket's address through a descriptor of its directory: /proc/self/fd/N/NAME is
// short whatever the directory's path (sun_path holds 107 bytes).
struct Address {
    Fd dir;
    sockaddr_un sun = {};
    socklen_t len = 0;
};

Result<Address> address_of(const std::string& dir, const std::string& name) {
    Address a;
    a.dir.reset(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!a.dir) return fail(sys_error("open", dir));
    std::string path = "/proc/self/fd/" + std::to_string(a.dir.get()) + "/" + name;
    if (path.size() >= sizeof a.sun.sun_path) return fail(make_error(Code::usage, "socket name too long", name));
    a.sun.sun_family = AF_UNIX;
    std::memcpy(a.sun.sun_path, path.c_str(), path.size() + 1);
    a.len = socklen_t(offsetof(sockaddr_un, sun_path) + path.size() + 1);
    return a;
}

// The pid of the process `pidfd` refers to, in our pid namespace (from its fdinfo; -1
// once it has been reaped).
int pid_of(int pidfd) {
    auto text = fs::read_file("/proc/self/fdinfo/" + std::to_string(pidfd));
    auto pid = text ? proc::status_field(*text, "Pid") : std::nullopt;
    return pid ? std::atoi(std::string(*pid).c_str()) : -1;
}
// Our umask, read once without changing it (umask() would, for every thread).
mode_t our_umask() {
    static const mode_t mask = [] {
        auto text = fs::read_file("/proc/self/status");
        auto mask = text ? proc::status_field(*text, "Umask") : std::nullopt;
        return mask ? mode_t(std::strtoul(std::string(*mask).c_str(), nullptr, 8)) : mode_t(022);
    }();
    return mask;
}
}  // namespace

Result<Fd> listen_for_execs(const std::string& dir, const std::string& name) {
    auto a = address_of(dir, name);
    if (!a) return fail(a.error());
    if (::unlinkat(a->dir.get(), name.c_str(), 0) < 0 && errno != ENOENT)
        return fail(sys_error("unlink", dir + "/" + name));
    Fd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!s) return fail(sys_error("socket"));
    if (::bind(s.get(), reinterpret_cast<const sockaddr*>(&a->sun), a->len) < 0)
        return fail(sys_error("bind", dir + "/" + name));
    if (::listen(s.get(), 64) < 0) return fail(sys_error("listen", dir + "/" + name));
    return s;
}

Result<std::optional<Fd>> send_served(const std::string& dir, const std::string& name, const ServedCommand& cmd,
                                      const int (&fds)[4]) {
    std::string strings = cmd.workdir + '\0';
    for (const auto* list : {&cmd.argv, &cmd.env, &cmd.candidates})
        for (auto& s : *list) strings += s + '\0';
    if (sizeof(dsec_exec_request) + strings.size() > DSEC_EXEC_MAX_BYTES || cmd.argv.empty()) return std::nullopt;
    errno = 0;
    int nice = ::getpriority(PRIO_PROCESS, 0);
    if (errno != 0) nice = 0;
    dsec_exec_request req = {DSEC_EXEC_MAGIC,         uint32_t(cmd.argv.size()),   uint32_t(cmd.env.size()),
                             uint32_t(cmd.candidates.size()), uint32_t(strings.size()), uint32_t(our_umask()), nice};
    // What a joined command would inherit from us: every limit (the init keeps the
    // sandbox's own core, nofile and fsize) and the CPUs we may run on.
    for (int r = 0; r < DSEC_EXEC_NLIMITS; r++) {
        struct rlimit l = {RLIM_INFINITY, RLIM_INFINITY};
        (void)::getrlimit(static_cast<__rlimit_resource_t>(r), &l);
        req.limits[r] = {l.rlim_cur, l.rlim_max};
    }
    long mask_bytes = ::syscall(SYS_sched_getaffinity, 0, sizeof req.cpus, req.cpus);
    req.cpus_bytes = mask_bytes > 0 ? uint32_t(mask_bytes) : 0;
    req.flags = cmd.ends_sandbox ? DSEC_EXEC_ENDS_SANDBOX : 0;
    // Until the init has answered that it started the command, nothing has started: any
    // failure up to there leaves it to the join.
    auto a = address_of(dir, name);
    if (!a) return std::nullopt;
    Fd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!s || ::connect(s.get(), reinterpret_cast<const sockaddr*>(&a->sun), a->len) < 0) return std::nullopt;

    struct iovec iov[2] = {{&req, sizeof req}, {strings.data(), strings.size()}};
    if (send_fds(s.get(), iov, 2, fds, std::size(fds)) < 0) return std::nullopt;
    return std::optional<Fd>(std::move(s));
}

Result<std::optional<ns::Joined>> await_served(Fd s, const std::string& dir, const std::string& name) {
    dsec_exec_started started = {};
    Fd pidfd;
    ssize_t n = recv_fd(s.get(), &started, sizeof started, pidfd);
    // Refused: closed unread (n 0, or ECONNRESET), or answered with the reason no
    // command was made.
    if (n == 0 || (n < 0 && errno == ECONNRESET) || (n == ssize_t(sizeof started) && started.err != 0))
        return std::nullopt;
    if (n != ssize_t(sizeof started) || !pidfd)
        return fail(n < 0 ? sys_error("recvmsg", dir + "/" + name)
                          : make_error(Code::io, "the sandbox's init answered an exec with neither a command nor a refusal", dir));
    // 0 when it has already ended (and been reaped): nothing left to signal.
    int pid = std::max(0, pid_of(pidfd.get()));
    return std::optional<ns::Joined>(ns::Joined{pid, std::move(pidfd), std::move(s)});
}

}  // namespace dsec::sandbox
