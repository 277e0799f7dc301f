#include "dsec/sandbox/activity.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "dsec/cgroup/cgroup.h"
#include "dsec/sys/process.h"
#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

namespace {
std::string activity_file(const Paths& paths, const std::string& id) { return paths.state_dir(id) + "/active"; }
}  // namespace

Use::~Use() {
    if (!file_.empty()) (void)::utimensat(AT_FDCWD, file_.c_str(), nullptr, 0);
}

Result<Use> begin_use(const Paths& paths, const std::string& id) {
    if (!fs::exists(paths.state_dir(id)))
        return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id));
    std::string file = activity_file(paths, id);
    auto held = fs::lock(file, fs::LockMode::shared);
    if (!held) return fail(held.error());
    // The mtime is the record of the last use: nothing is written, nothing is synced.
    if (::utimensat(AT_FDCWD, file.c_str(), nullptr, 0) < 0) {
        // Destroyed (by ttl, say) while we waited for the lock.
        if (errno == ENOENT) return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (destroyed)", id));
        return fail(sys_error("utimensat", file));
    }
    // The state names the memcg mode, which places the freezer on v2 (cgroup/placement.h).
    auto state = load(paths, id);
    auto found = state ? cgroup_of(paths, *state) : cgroup_of(paths, id);
    if (!found) return fail(found.error());
    const cgroup::Cgroup& cg = *found;
    // Frozen by a snapshot that is copying its files: wait for it to thaw the sandbox
    // (a copy taken half before and half after this command would be inconsistent).
    if (state && state->extra.contains("snapshot") && state->extra["snapshot"].is_object()) {
        int pid = state->extra["snapshot"].value("pid", 0);
        unsigned long long start = state->extra["snapshot"].value("pid_start", 0ULL);
        for (int waited_ms = 0; waited_ms < 120000 && cg.frozen() && proc::process_alive(pid, start); waited_ms += 10)
            ::usleep(10000);
    }
    // Paused by dsec-reclaim idle (or left frozen by a snapshot that was killed): a
    // process joining a frozen group would freeze too.
    if (cg.frozen())
        if (auto r = cg.thaw(); !r) return fail(std::move(r.error()).context("resuming paused sandbox " + id));
    return Use(std::move(*held), file);
}

Result<fs::Lock> try_claim_idle(const Paths& paths, const std::string& id) {
    if (!fs::exists(paths.state_dir(id)))
        return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id));
    std::string file = activity_file(paths, id);
    // Made here if no exec ever ran: its mtime is then set to 0 ("never used") under the
    // lock, so that making it does not count as a use. An exec waits for the lock before
    // it sets the mtime, so no use is lost.
    bool made = true;
    Fd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!fd && errno == EEXIST) {
        made = false;
        fd.reset(::open(file.c_str(), O_RDWR | O_CLOEXEC));
    }
    if (!fd) return fail(sys_error("open", file));
    while (::flock(fd.get(), LOCK_EX | LOCK_NB) < 0) {
        if (errno == EINTR) continue;
        if (errno == EWOULDBLOCK) return fail(errno_error(EBUSY, "flock", file));
        return fail(sys_error("flock", file));
    }
    struct timespec never[2] = {{0, 0}, {0, 0}};
    if (made && ::futimens(fd.get(), never) < 0) return fail(sys_error("futimens", file));
    return fs::Lock(std::move(fd));
}

int64_t last_use_unix(const Paths& paths, const std::string& id) {
    struct stat st;
    if (::stat(activity_file(paths, id).c_str(), &st) < 0) return 0;
    // 0 is "never used" (see try_claim_idle).
    return int64_t(st.st_mtim.tv_sec);
}

}  // namespace dsec::sandbox
