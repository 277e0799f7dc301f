#include "dsec/snapshot/fork.h"

#include "dsec/sandbox/policy.h"

namespace dsec::snapshot {

Result<sandbox::CreateOptions> options_like(const nlohmann::json& state) {
    sandbox::CreateOptions o;
    try {
        const auto& limits = state.value("limits", nlohmann::json::object());
        o.limits.memory = limits.value("memory", uint64_t(0));
        o.limits.cpus = limits.value("cpus", 0.0);
        o.limits.pids = limits.value("pids", uint64_t(0));
        o.disk = limits.value("disk", uint64_t(0));
        o.tmp_size = limits.value("tmp", sandbox::kDefaultTmpSize);
        // A fork of a sandbox in the shared memory cgroup joins it too.
        if (auto m = cgroup::parse_memcg(state.value("memcg", "own")); m) o.memcg = *m;
        // The state holds the environment as resolved at create: given whole, it wins over the image's.
        o.env = state.value("env", std::vector<std::string>{});
        o.workdir = state.value("workdir", "");
        o.user = state.value("user", "");
        o.network = state.value("network", "none");
        o.labels = state.value("labels", std::map<std::string, std::string>{});
        for (auto [key, out] : {std::pair{"ttl", &o.ttl_ms}, std::pair{"idle_ttl", &o.idle_ttl_ms}})
            if (state.contains(key) && state[key].is_number()) *out = uint64_t(state[key].get<double>() * 1000);
        o.policy = state.value("policy", "");
        // The same binds: forks see the same host paths, locked the same way.
        o.binds = sandbox::binds_from_record(state.value("binds", nlohmann::json::array()));
    } catch (const nlohmann::json::exception& e) {
        return fail(make_error(Code::bad_input, std::string("sandbox state field of the wrong type: ") + e.what(),
                               state.value("id", "")));
    }
    // The same policy: hidden paths stay hidden in every fork (their files are in the
    // layers the fork starts from), syscall rules and limits hold there too.
    auto guard = sandbox::policy_of_state(state);
    if (!guard) return fail(guard.error());
    o.guard = *guard;
    auto sec = sandbox::security_from_state(state);
    if (!sec) return fail(sec.error());
    o.security = *sec;
    auto init = sandbox::find_init();
    if (!init) return fail(init.error());
    o.init_program = *init;
    return o;
}

}  // namespace dsec::snapshot
