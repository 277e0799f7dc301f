#include "dsec/sandbox/shared_memory.h"

#include <unistd.h>

namespace dsec::sandbox {

namespace {
std::string lock_file(const Paths& paths) { return paths.run + "/shared-memory.lock"; }
}  // namespace

Result<fs::Lock> hold_shared_memory(const Paths& paths) { return fs::lock(lock_file(paths), fs::LockMode::shared); }

std::string remove_shared_memory_if_unused(const Paths& paths) {
    auto layout = cgroup::detect();
    if (!layout) return "";
    // Any id gives the same shared group.
    std::string dir = cgroup::Cgroup(*layout, paths.cgroup_parent(), "x", cgroup::Memcg::shared).shared_dir();
    if (dir.empty() || !fs::exists(dir)) return "";
    // Busy: a create is making or joining the group, which it keeps then.
    auto held = fs::try_lock(lock_file(paths));
    if (!held) return "";
    return ::rmdir(dir.c_str()) == 0 ? dir : "";
}

}  // namespace dsec::sandbox
