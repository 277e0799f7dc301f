#include "dsec/sandbox/live.h"

#include "dsec/cgroup/cgroup.h"
#include "dsec/layer/store.h"
#include "dsec/sandbox/activity.h"
#include "dsec/sandbox/listing.h"
#include "dsec/sandbox/network.h"

namespace dsec::sandbox {

std::optional<json> live_record(const Paths& paths, const std::string& id, bool full) {
    auto state = listed_state(paths, id);
    if (!state) return std::nullopt;
    const State& st = *state;
    const json& fields = st.extra;
    std::string s(lifecycle_name(st.lifecycle));
    if (s == "running" && !init_alive(st)) s = "dead";
    json rec = full ? public_record(st) : json{{"type", "sandbox"}, {"v", 1}, {"id", id}};
    rec["state"] = s;
    rec["age_s"] = now_unix() - fields.value("created_unix", now_unix());
    // The last exec is the activity file's mtime (written without touching the state).
    int64_t used = last_use_unix(paths, id);
    rec["last_exec"] = used > 0 ? json(layer::rfc3339(used)) : fields.value("last_exec", json(nullptr));
    rec["labels"] = fields.value("labels", json::object());
    // Always present, so a reader never guesses what a missing field means: null when
    // the kernel has no figure (a sandbox whose cgroup is gone).
    rec["memory"] = nullptr;
    rec["cpu_s"] = nullptr;
    rec["oom_kills"] = 0;
    // With a shared memory cgroup, "memory" is the sum of its processes' Pss (cgroup.h).
    rec["memcg"] = cgroup::memcg_name(memcg_of(st));
    if (auto found = cgroup_of(paths, st); found) {
        const cgroup::Cgroup& cg = *found;
        if (auto m = cg.memory_usage(); m) rec["memory"] = *m;
        if (auto c = cg.cpu_usage_ns(); c) rec["cpu_s"] = double(*c) / 1e9;
        rec["oom_kills"] = cg.oom_kills();
        if (s == "running" && cg.frozen()) rec["state"] = "paused";
    }
    if (full && fields.contains("egress")) rec["egress_denials"] = egress_counts(paths, id);
    return rec;
}

}  // namespace dsec::sandbox
