#include "dsec/sandbox/signal.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "dsec/cgroup/cgroup.h"
#include "dsec/sandbox/open.h"
#include "dsec/sandbox/standby.h"
#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"

namespace dsec::sandbox {

Result<int> parse_signal(const std::string& text) {
    std::string t = text;
    for (auto& c : t) c = char(std::toupper(static_cast<unsigned char>(c)));
    if (t.rfind("SIG", 0) == 0) t = t.substr(3);
    char* end = nullptr;
    long n = std::strtol(t.c_str(), &end, 10);
    if (!t.empty() && end && *end == 0) {
        if (n >= 1 && n < NSIG) return int(n);
    } else {
        for (int s = 1; s < NSIG; s++) {
            const char* abbrev = ::sigabbrev_np(s);
            if (abbrev && t == abbrev) return s;
        }
    }
    return fail(make_error(Code::usage, "unknown signal \"" + text + "\" (a name such as TERM or KILL, or a number)"));
}

namespace {
// The process's cgroup paths (in the host's view) include the sandbox's own group.
bool in_group(int pid, const std::string& group) {
    auto text = fs::read_file("/proc/" + std::to_string(pid) + "/cgroup");
    if (!text) return false;
    size_t at = 0;
    while ((at = text->find(group, at)) != std::string::npos) {
        size_t after = at + group.size();
        if (after == text->size() || (*text)[after] == '\n') return true;
        at = after;
    }
    return false;
}
}  // namespace

Result<int> signal_sandbox(const Paths& paths, const std::string& id, int sig) {
    auto opened = open_sandbox(paths, id, Need::running_init);
    if (!opened) return fail(opened.error());
    int init = opened->state.pid;
    const cgroup::Cgroup* cg = &opened->cg;
    std::string group = ":/" + paths.cgroup_parent() + "/" + id;
    int sent = 0;
    for (int pid : cg->pids()) {
        // Not an init: the sandbox's own, nor a standby (standby.h), which shares the cgroup.
        if (pid == init || is_namespace_init(pid)) continue;
        Fd pidfd(int(::syscall(SYS_pidfd_open, pid, 0)));
        if (!pidfd || !in_group(pid, group)) continue;  // gone, or no longer ours
        if (::syscall(SYS_pidfd_send_signal, pidfd.get(), sig, nullptr, 0) == 0) sent++;
    }
    return sent;
}

}  // namespace dsec::sandbox
