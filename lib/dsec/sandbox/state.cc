#include "dsec/sandbox/state.h"

#include <algorithm>
#include <array>
#include <ctime>

#include "dsec/cgroup/cgroup.h"
#include "dsec/layer/store.h"
#include "dsec/sys/process.h"

namespace dsec::sandbox {

namespace {
constexpr std::array<std::pair<Lifecycle, std::string_view>, 6> kLifecycles = {{
    {Lifecycle::creating, "creating"},
    {Lifecycle::running, "running"},
    {Lifecycle::paused, "paused"},
    {Lifecycle::destroying, "destroying"},
    {Lifecycle::dead, "dead"},
    {Lifecycle::broken, "broken"},
}};

// The fields State holds typed; everything else stays in `extra`.
constexpr std::array<std::string_view, 10> kTyped = {"type",   "v",       "id",      "state", "pid",
                                                     "pid_start", "cgroup", "standby", "resets", "reset"};

Result<SavedCgroup> cgroup_from_record(const json& j) {
    if (!j.is_object() || !j.contains("mode") || !j["mode"].is_string() || !j.contains("dirs") ||
        !j["dirs"].is_array())
        return fail(make_error(Code::bad_input, "sandbox state: \"cgroup\" needs \"mode\" and \"dirs\""));
    SavedCgroup cg{j["mode"].get<std::string>(), {}};
    for (auto& d : j["dirs"]) {
        if (!d.is_string()) return fail(make_error(Code::bad_input, "sandbox state: \"cgroup.dirs\" holds a non-string"));
        cg.dirs.push_back(d.get<std::string>());
    }
    return cg;
}
}  // namespace

std::string Paths::cgroup_parent() const { return cgroup::parent_for_run(run); }

std::string_view lifecycle_name(Lifecycle l) {
    for (auto& [value, name] : kLifecycles)
        if (value == l) return name;
    return "broken";
}

Result<Lifecycle> parse_lifecycle(std::string_view name) {
    for (auto& [value, n] : kLifecycles)
        if (n == name) return value;
    return fail(make_error(Code::bad_input, "sandbox state: unknown state \"" + std::string(name) + "\""));
}

json Standby::to_record() const { return {{"pid", pid}, {"pid_start", pid_start}, {"upper", upper}, {"work", work}}; }

Standby Standby::of(const json& state) {
    Standby s;
    if (!state.is_object() || !state.contains("standby") || !state["standby"].is_object()) return s;
    const json& r = state["standby"];
    auto number = [&](const char* key) { return r.contains(key) && r[key].is_number_integer(); };
    auto text = [&](const char* key) { return r.contains(key) && r[key].is_string() ? r[key].get<std::string>() : ""; };
    s.pid = number("pid") ? r["pid"].get<int>() : 0;
    s.pid_start = number("pid_start") ? r["pid_start"].get<unsigned long long>() : 0;
    s.upper = text("upper");
    s.work = text("work");
    if (s.upper.empty() || s.work.empty()) s.pid = 0;
    return s;
}

bool Standby::alive() const { return pid > 0 && proc::process_alive(pid, pid_start); }

json State::to_record() const {
    json j = extra;
    j["type"] = "sandbox";
    j["v"] = 1;
    j["id"] = id;
    j["state"] = lifecycle_name(lifecycle);
    j["pid"] = pid;
    j["pid_start"] = pid_start;
    if (cgroup) j["cgroup"] = {{"mode", cgroup->mode}, {"dirs", cgroup->dirs}};
    if (standby.pid > 0 || !standby.upper.empty()) j["standby"] = standby.to_record();
    if (resets > 0) j["resets"] = resets;
    if (!reset_at.empty()) j["reset"] = reset_at;
    return j;
}

Result<State> State::from_record(const json& j) {
    if (!j.is_object()) return fail(make_error(Code::bad_input, "sandbox state is not an object"));
    State s;
    if (!j.contains("id") || !j["id"].is_string()) return fail(make_error(Code::bad_input, "sandbox state: no \"id\"").in_field("id"));
    s.id = j["id"].get<std::string>();
    if (!j.contains("state") || !j["state"].is_string())
        return fail(make_error(Code::bad_input, "sandbox state: no \"state\"", s.id).in_field("state"));
    auto life = parse_lifecycle(j["state"].get<std::string>());
    if (!life) return fail(std::move(life.error()).context(s.id).in_field("state"));
    s.lifecycle = *life;
    if (j.contains("pid") && !j["pid"].is_number_integer())
        return fail(make_error(Code::bad_input, "sandbox state: \"pid\" is not a number", s.id).in_field("pid"));
    if (j.contains("pid_start") && !j["pid_start"].is_number_integer())
        return fail(make_error(Code::bad_input, "sandbox state: \"pid_start\" is not a number", s.id).in_field("pid_start"));
    s.pid = j.value("pid", 0);
    s.pid_start = j.value("pid_start", 0ULL);
    if (j.contains("cgroup")) {
        auto cg = cgroup_from_record(j["cgroup"]);
        if (!cg) return fail(std::move(cg.error()).context(s.id).in_field("cgroup"));
        s.cgroup = std::move(*cg);
    }
    s.standby = Standby::of(j);
    if (j.contains("resets") && j["resets"].is_number_integer()) s.resets = j["resets"].get<int>();
    if (j.contains("reset") && j["reset"].is_string()) s.reset_at = j["reset"].get<std::string>();
    for (auto& [key, value] : j.items())
        if (std::find(kTyped.begin(), kTyped.end(), key) == kTyped.end()) s.extra[key] = value;
    return s;
}

std::string State::rootfs_id() const {
    auto r = extra.find("rootfs");
    if (r == extra.end() || !r->is_object()) return "";
    auto id = r->find("id");
    return id != r->end() && id->is_string() ? id->get<std::string>() : "";
}

std::vector<std::string> State::layer_digests() const {
    std::vector<std::string> out;
    auto r = extra.find("rootfs");
    if (r == extra.end() || !r->is_object()) return out;
    for (auto& l : r->value("layers", json::array()))
        if (l.is_object() && l.contains("digest") && l["digest"].is_string()) out.push_back(l["digest"].get<std::string>());
    return out;
}

Result<mount::Rootfs> State::rootfs() const { return mount::Rootfs::from_record(extra.value("rootfs", json::object())); }

std::string State::upper() const {
    auto r = extra.find("rootfs");
    return r != extra.end() && r->is_object() ? r->value("upper", "") : "";
}

std::string State::work() const {
    auto r = extra.find("rootfs");
    return r != extra.end() && r->is_object() ? r->value("work", "") : "";
}

void State::set_upper(const std::string& upper, const std::string& work) {
    json& rootfs = extra["rootfs"];
    if (!rootfs.is_object()) rootfs = json::object();
    rootfs["upper"] = upper;
    rootfs["work"] = work;
}

namespace {
// The state file as a JSON object, not yet checked as a state.
Result<json> read_record(const Paths& paths, const std::string& id) {
    auto text = fs::read_file(paths.state_file(id));
    if (!text) {
        if (text.error().err == ENOENT)
            return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id));
        return fail(text.error());
    }
    auto j = json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return fail(make_error(Code::bad_input, "sandbox state does not parse", paths.state_file(id)));
    return j;
}
}  // namespace

Result<State> load(const Paths& paths, const std::string& id) {
    auto j = read_record(paths, id);
    if (!j) return fail(j.error());
    return State::from_record(*j);
}

Status save(const Paths& paths, const State& state) {
    return fs::atomic_write(paths.state_file(state.id), state.to_record().dump() + "\n");
}

Result<std::map<std::string, size_t>> layer_users(const Paths& paths) {
    std::map<std::string, size_t> users;
    auto ids = fs::list_dir(paths.sandboxes());
    if (!ids) return fail(ids.error());
    for (auto& id : *ids) {
        // Read leniently: a state this build cannot take whole (a lifecycle a newer build
        // wrote, say) still holds a live init on its layers, which must not go.
        auto j = read_record(paths, id);
        if (!j) continue;
        State st;
        st.pid = j->value("pid", 0);
        st.pid_start = j->value("pid_start", 0ULL);
        if (j->contains("rootfs")) st.extra["rootfs"] = (*j)["rootfs"];
        if (!init_alive(st)) continue;
        for (auto& digest : st.layer_digests()) users[digest]++;
    }
    return users;
}

Result<fs::Lock> lock(const Paths& paths, const std::string& id) {
    if (!fs::exists(paths.state_dir(id)))
        return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id));
    return fs::lock(paths.state_dir(id) + "/lock");
}

std::vector<std::string> list_ids(const Paths& paths) {
    auto ids = fs::list_dir(paths.sandboxes());
    return ids ? *ids : std::vector<std::string>{};
}

bool init_alive(const State& state) { return state.pid > 0 && proc::process_alive(state.pid, state.pid_start); }

json public_record(const State& state) { return state.to_record(); }

std::string now_rfc3339() { return layer::now_rfc3339(); }

int64_t now_unix() { return int64_t(std::time(nullptr)); }

cgroup::Memcg memcg_of(const State& state) {
    auto named = state.extra.find("memcg");
    if (named == state.extra.end() || !named->is_string()) return cgroup::Memcg::own;
    auto m = cgroup::parse_memcg(named->get<std::string>());
    return m ? *m : cgroup::Memcg::own;
}

Result<cgroup::Cgroup> cgroup_of(const Paths& paths, const std::string& id) {
    auto state = load(paths, id);
    if (state) return cgroup_of(paths, *state);
    auto layout = cgroup::detect();
    if (!layout) return fail(layout.error());
    return cgroup::Cgroup(*layout, paths.cgroup_parent(), id);
}

Result<cgroup::Cgroup> cgroup_of(const Paths& paths, const State& state) {
    auto layout = cgroup::detect();
    if (!layout) return fail(layout.error());
    return cgroup::Cgroup(*layout, paths.cgroup_parent(), state.id, memcg_of(state));
}

}  // namespace dsec::sandbox
