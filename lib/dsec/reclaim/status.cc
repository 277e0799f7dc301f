#include "dsec/reclaim/status.h"

#include <algorithm>

#include "dsec/cgroup/cgroup.h"
#include "dsec/reclaim/memory.h"
#include "dsec/sandbox/activity.h"
#include "dsec/sandbox/cpu_class.h"
#include "dsec/sandbox/listing.h"
#include "dsec/sandbox/state.h"

namespace dsec::reclaim {

std::string live_state(const dsec::Paths& p, const std::string& id, const sandbox::State& state) {
    std::string s(sandbox::lifecycle_name(state.lifecycle));
    if (state.lifecycle != sandbox::Lifecycle::running) return s;
    if (!sandbox::init_alive(state)) return "dead";
    auto layout = cgroup::detect();
    if (layout && cgroup::Cgroup(*layout, sandbox::Paths(p).cgroup_parent(), id, sandbox::memcg_of(state)).frozen())
        return "paused";
    return s;
}

std::optional<nlohmann::json> sandbox_status(const dsec::Paths& p, const std::string& id) {
    sandbox::Paths paths(p);
    auto state = sandbox::listed_state(paths, id);
    if (!state) return std::nullopt;
    const sandbox::State& st = *state;
    int64_t now = sandbox::now_unix();
    int64_t created = st.extra.value("created_unix", now);
    nlohmann::json rec = {{"type", "sandbox"},
                          {"v", 1},
                          {"id", id},
                          {"state", live_state(p, id, st)},
                          {"class", sandbox::cpu_class_name(sandbox::cpu_class_of(st.extra))},
                          {"age_s", now - created},
                          {"idle_s", now - std::max(created, sandbox::last_use_unix(paths, id))}};
    rec["memcg"] = cgroup::memcg_name(sandbox::memcg_of(st));
    if (auto layout = cgroup::detect(); layout && sandbox::memcg_of(st) == cgroup::Memcg::shared) {
        // The shared group's figures are every sandbox's: this one's processes' Pss instead.
        if (auto m = cgroup::Cgroup(*layout, paths.cgroup_parent(), id, cgroup::Memcg::shared).memory_usage(); m)
            rec["memory"] = *m;
    } else if (layout) {
        std::string dir = memory_dir(*layout, paths.cgroup_parent(), id);
        if (auto m = memory_use(*layout, dir); m && !dir.empty()) rec.update(m->to_json());
    }
    return rec;
}

}  // namespace dsec::reclaim
