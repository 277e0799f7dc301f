#include "dsec/sys/proc.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "dsec/sys/fd.h"

extern char** environ;

namespace dsec::proc {

Result<Outcome> run(const std::vector<std::string>& argv) {
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC) < 0) return fail(sys_error("pipe"));
    Fd rd(pipefd[0]), wr(pipefd[1]);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    posix_spawn_file_actions_adddup2(&fa, wr.get(), 2);

    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid;
    int rc = ::posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return fail(errno_error(rc, "spawn", argv[0]));
    wr.reset();

    Outcome out;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(rd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.stderr_tail.append(buf, size_t(n));
        if (out.stderr_tail.size() > 4096) out.stderr_tail.erase(0, out.stderr_tail.size() - 4096);
    }
    int wstatus;
    while (::waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) return fail(sys_error("waitpid", argv[0]));
    }
    out.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    return out;
}

Status run_checked(const std::vector<std::string>& argv) {
    auto out = run(argv);
    if (!out) return fail(out.error());
    if (out->status != 0) {
        std::string tail = out->stderr_tail;
        while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
        auto nl = tail.find_last_of('\n');
        if (nl != std::string::npos) tail = tail.substr(nl + 1);
        Error e = make_error(Code::helper_failed, argv[0] + " exited with status " + std::to_string(out->status) +
                                                  (tail.empty() ? "" : ": " + tail));
        e.op = argv[0];
        return fail(std::move(e));
    }
    return {};
}

}  // namespace dsec::proc
