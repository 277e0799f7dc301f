#include "dsec/bench/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <sstream>

#include "dsec/sys/fd.h"

extern char** environ;

namespace dsec::bench {

double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

namespace {

Result<std::pair<Fd, Fd>> make_pipe() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail(sys_error("pipe"));
    return std::pair<Fd, Fd>{Fd(p[0]), Fd(p[1])};
}

// Feeds `input` to `in` and drains `out`/`err` until both close, without deadlocking
// on a child that writes a lot before it reads everything.
void pump(Fd& in, const std::string& input, Fd& out, std::string* out_text, Fd& err, std::string& err_tail) {
    size_t written = 0;
    if (in && input.empty()) in.reset();
    if (in) ::fcntl(in.get(), F_SETFL, O_NONBLOCK);
    char buf[65536];
    while (in || out || err) {
        pollfd fds[3];
        int n = 0;
        int in_i = -1, out_i = -1, err_i = -1;
        if (in) { in_i = n; fds[n++] = {in.get(), POLLOUT, 0}; }
        if (out) { out_i = n; fds[n++] = {out.get(), POLLIN, 0}; }
        if (err) { err_i = n; fds[n++] = {err.get(), POLLIN, 0}; }
        if (::poll(fds, nfds_t(n), -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (in_i >= 0 && fds[in_i].revents) {
            ssize_t w = ::write(in.get(), input.data() + written, input.size() - written);
            if (w > 0) written += size_t(w);
            if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) in.reset();
        }
        auto drain = [&](int i, Fd& fd, std::string* sink, bool tail) {
            if (i < 0 || !fds[i].revents) return;
            ssize_t r = ::read(fd.get(), buf, sizeof buf);
            if (r < 0 && errno == EINTR) return;
            if (r <= 0) { fd.reset(); return; }
            if (sink) sink->append(buf, size_t(r));
            if (tail && sink->size() > 4096) sink->erase(0, sink->size() - 4096);
        };
        drain(out_i, out, out_text, false);
        drain(err_i, err, &err_tail, true);
    }
}

}  // namespace

Result<Ran> spawn(const std::vector<std::string>& argv, const SpawnOptions& opts) {
    if (argv.empty()) return fail(make_error(Code::usage, "nothing to run"));
    auto in = make_pipe();
    auto out = make_pipe();
    auto err = make_pipe();
    if (!in) return fail(in.error());
    if (!out) return fail(out.error());
    if (!err) return fail(err.error());

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (opts.input.empty()) posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    else posix_spawn_file_actions_adddup2(&fa, in->first.get(), 0);
    if (opts.capture_stdout) posix_spawn_file_actions_adddup2(&fa, out->second.get(), 1);
    else posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, err->second.get(), 2);

    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    Ran ran;
    pid_t pid;
    double start = now_ms();
    int rc = ::posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        Error e = errno_error(rc, "spawn", argv[0]);
        if (rc == ENOENT) e.code = Code::not_found;
        return fail(std::move(e));
    }
    in->first.reset();
    out->second.reset();
    err->second.reset();
    if (!opts.capture_stdout) out->first.reset();
    pump(in->second, opts.input, out->first, &ran.out, err->first, ran.err_tail);

    int wstatus;
    while (::waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) return fail(sys_error("waitpid", argv[0]));
    }
    ran.ms = now_ms() - start;
    ran.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    return ran;
}

std::string last_line(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    auto nl = text.find_last_of('\n');
    return nl == std::string::npos ? text : text.substr(nl + 1);
}

Result<Ran> spawn_checked(const std::vector<std::string>& argv, const SpawnOptions& opts) {
    auto ran = spawn(argv, opts);
    if (!ran) return ran;
    if (ran->status != 0) {
        std::string tail = last_line(ran->err_tail);
        Error e = make_error(Code::helper_failed, argv[0] + " exited with status " + std::to_string(ran->status) +
                                                  (tail.empty() ? "" : ": " + tail));
        e.op = argv.size() > 1 ? argv[0] + " " + argv[1] : argv[0];
        return fail(std::move(e));
    }
    return ran;
}

std::string find_tool(const std::string& name) {
    auto executable = [](const std::string& p) {
        struct stat st;
        return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
    };
    char self[4096];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        std::string dir(self, size_t(n));
        dir = dir.substr(0, dir.find_last_of('/'));
        if (executable(dir + "/" + name)) return dir + "/" + name;
    }
    const char* path = std::getenv("PATH");
    std::istringstream in(path ? path : "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
    std::string dir;
    while (std::getline(in, dir, ':'))
        if (!dir.empty() && executable(dir + "/" + name)) return dir + "/" + name;
    return "";
}

}  // namespace dsec::bench
