#include "dsec/sandbox/security.h"

#include <unistd.h>

#include <cerrno>

#include "dsec/guard/policy_filter.h"
#include "dsec/guard/seccomp.h"

namespace dsec::sandbox {

namespace {
std::string bpf_path(const Paths& paths, const std::string& id) { return paths.state_dir(id) + "/seccomp.bpf"; }

json limit_record(uint64_t v) { return v == RLIM_INFINITY ? json(nullptr) : json(v); }
uint64_t limit_of(const json& v) { return v.is_number_unsigned() ? v.get<uint64_t>() : RLIM_INFINITY; }
}  // namespace

json security_record(const Security& s) {
    return {{"userns", s.userns ? "private" : "host"},
            {"caps", ns::cap_names(s.caps)},
            {"rlimits",
             {{"nofile", {s.rlimits.nofile_soft, s.rlimits.nofile_hard}},
              {"core", limit_record(s.rlimits.core)},
              {"fsize", limit_record(s.rlimits.fsize)}}},
            {"seccomp", s.seccomp}};
}

Result<Security> security_from_state(const json& state) {
    Security s;
    const json& j = state.contains("security") ? state["security"] : json();
    if (!j.is_object())
        return fail(make_error(Code::bad_input, "sandbox \"" + state.value("id", "") +
                                                "\" was made by an older dsec, without a user namespace: destroy it "
                                                "and create it again"));
    s.userns = j.value("userns", "private") != "host";
    std::vector<std::string> names;
    if (j.contains("caps") && j["caps"].is_array())
        for (auto& c : j["caps"])
            if (c.is_string()) names.push_back(c.get<std::string>());
    auto caps = ns::caps_from_names(names);
    if (!caps) return fail(caps.error());
    s.caps = *caps;
    if (j.contains("rlimits") && j["rlimits"].is_object()) {
        const json& r = j["rlimits"];
        if (r.contains("nofile") && r["nofile"].is_array() && r["nofile"].size() == 2) {
            s.rlimits.nofile_soft = limit_of(r["nofile"][0]);
            s.rlimits.nofile_hard = limit_of(r["nofile"][1]);
        }
        if (r.contains("core")) s.rlimits.core = limit_of(r["core"]);
        if (r.contains("fsize")) s.rlimits.fsize = limit_of(r["fsize"]);
    }
    s.seccomp = j.value("seccomp", "default");
    return s;
}

Status install_seccomp(const Paths& paths, const std::string& id, const std::string& choice,
                       const guard::SyscallRules* rules) {
    if (choice == "unconfined") return {};
    std::string text;
    if (choice == "default") {
        text = std::string(guard::default_seccomp_profile());
    } else {
        auto t = fs::read_file(choice);
        if (!t) return fail(std::move(t.error()).context("reading the seccomp profile"));
        text = std::move(*t);
    }
    auto cached = rules && !rules->empty() ? guard::cached_policy_filter(paths.run, text, *rules)
                                           : guard::cached_seccomp_filter(paths.run, text);
    if (!cached) return fail(cached.error());
    if (cached->empty()) return {};
    // A link, not a copy: the cached program never changes, and the sandbox keeps its own
    // even if the cache is cleared.
    if (::link(cached->c_str(), bpf_path(paths, id).c_str()) < 0 && errno != EEXIST)
        return fail(sys_error("link", bpf_path(paths, id)));
    return {};
}

Result<std::unique_ptr<dsec_confinement>> confinement_for(const Paths& paths, const std::string& id,
                                                          const Security& s, int64_t uid, int64_t gid) {
    std::string program;
    if (s.seccomp != "unconfined") {
        auto p = guard::read_seccomp_filter(bpf_path(paths, id));
        if (!p) return fail(p.error());
        program = std::move(*p);
    }
    return ns::make_confinement(uid, gid, s.caps, s.rlimits, program);
}

}  // namespace dsec::sandbox
