#include "dsec/sandbox/state.h"

#include <ctime>

#include "dsec/cgroup/cgroup.h"
#include "dsec/layer/store.h"
#include "dsec/mount/usage.h"

namespace dsec::sandbox {

std::string Paths::cgroup_parent() const { return cgroup::parent_for_run(run); }

Result<json> load(const Paths& paths, const std::string& id) {
    auto text = fs::read_file(paths.state_file(id));
    if (!text) {
        if (text.error().err == ENOENT)
            return fail(make_error("not_found", "no sandbox \"" + id + "\" (unknown or destroyed)", id));
        return fail(text.error());
    }
    auto j = json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return fail(make_error("bad_input", "sandbox state does not parse", paths.state_file(id)));
    return j;
}

Status save(const Paths& paths, json state) {
    state["type"] = "sandbox";
    state["v"] = 1;
    std::string id = state.value("id", "");
    return fs::atomic_write(paths.state_file(id), state.dump() + "\n");
}

Result<fs::Lock> lock(const Paths& paths, const std::string& id) {
    if (!fs::exists(paths.state_dir(id)))
        return fail(make_error("not_found", "no sandbox \"" + id + "\" (unknown or destroyed)", id));
    return fs::lock(paths.state_dir(id) + "/lock");
}

std::vector<std::string> list_ids(const Paths& paths) {
    auto ids = fs::list_dir(paths.sandboxes());
    return ids ? *ids : std::vector<std::string>{};
}

bool init_alive(const json& state) {
    int pid = state.value("pid", 0);
    unsigned long long start = state.value("pid_start", 0ULL);
    return pid > 0 && mount::process_alive(pid, start);
}

json public_record(const json& state) {
    json out = state;
    out["type"] = "sandbox";
    out["v"] = 1;
    return out;
}

std::string now_rfc3339() { return layer::now_rfc3339(); }

int64_t now_unix() { return int64_t(std::time(nullptr)); }

Result<cgroup::Cgroup> cgroup_of(const Paths& paths, const std::string& id) {
    auto layout = cgroup::detect();
    if (!layout) return fail(layout.error());
    return cgroup::Cgroup(*layout, paths.cgroup_parent(), id);
}

}  // namespace dsec::sandbox
