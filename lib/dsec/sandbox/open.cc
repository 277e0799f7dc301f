#include "dsec/sandbox/open.h"

#include <sys/stat.h>

#include <algorithm>

#include "dsec/sys/id.h"

namespace dsec::sandbox {

ns::JoinSpec Opened::join(int namespaces, bool userns) const {
    return ns::JoinSpec{state.pid, state.pid_start, cg.v1_join_files(), cg.unified_dir(), namespaces, userns, {}};
}

namespace {
// Two names of one directory: a hierarchy mounted in two places is found at either, and
// the layout found now may name another than the one the sandbox's state saved.
bool same_dir(const std::string& a, const std::string& b) {
    if (a == b) return true;
    struct stat sa, sb;
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
}  // namespace

bool same_cgroup(const SavedCgroup& saved, const cgroup::Cgroup& cg) {
    // A sandbox made before dsec left the hierarchies of unused_dirs() also lists those.
    std::vector<std::string> dirs;
    for (auto& d : saved.dirs)
        if (std::find(cg.unused_dirs().begin(), cg.unused_dirs().end(), d) == cg.unused_dirs().end()) dirs.push_back(d);
    const auto& now = cg.dirs();
    return dirs.size() == now.size() && std::equal(dirs.begin(), dirs.end(), now.begin(), same_dir);
}

Result<Opened> open_sandbox(const Paths& paths, const std::string& id, Need need) {
    if (auto r = check_id(id); !r) return fail(r.error());
    auto state = load(paths, id);
    if (!state) return fail(state.error());
    bool running = state->lifecycle == Lifecycle::running;
    if (need != Need::any && (!running || (need == Need::running_init && !init_alive(*state)))) {
        std::string was(running ? "its init is gone" : "state " + std::string(lifecycle_name(state->lifecycle)));
        return fail(make_error(Code::not_running, "sandbox \"" + id + "\" is not running (" + was + ")", id));
    }
    auto cg = cgroup_of(paths, *state);
    if (!cg) return fail(cg.error());
    if (state->cgroup && !same_cgroup(*state->cgroup, *cg))
        return fail(make_error(Code::corrupt,
                               "sandbox \"" + id + "\" was created in cgroup " +
                                   (state->cgroup->dirs.empty() ? std::string("(none)") : state->cgroup->dirs.front()) +
                                   " (" + state->cgroup->mode + "), which this host's cgroup layout no longer gives it",
                               id));
    return Opened{std::move(*state), std::move(*cg)};
}

}  // namespace dsec::sandbox
