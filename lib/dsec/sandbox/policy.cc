#include "dsec/sandbox/policy.h"

#include <linux/capability.h>

#include <algorithm>
#include <cstdlib>

#include "dsec/guard/egress_rules.h"

namespace dsec::sandbox {

namespace {
// The lower of two limits where 0 means none.
template <typename T>
T lower(T have, T policy) {
    if (!policy) return have;
    return have && have < policy ? have : policy;
}
}  // namespace

void tighten_limits(const guard::PolicyLimits& l, CreateOptions& o) {
    o.limits.memory = lower(o.limits.memory, l.memory);
    o.limits.cpus = lower(o.limits.cpus, l.cpus);
    o.limits.pids = lower(o.limits.pids, l.pids);
    o.disk = lower(o.disk, l.disk);
    if (l.nofile) {
        o.security.rlimits.nofile_hard = std::min(o.security.rlimits.nofile_hard, l.nofile);
        o.security.rlimits.nofile_soft = std::min(o.security.rlimits.nofile_soft, l.nofile);
    }
}

Status use_policy(const std::string& path, CreateOptions& o) {
    auto policy = guard::load_policy(path);
    if (!policy) return fail(policy.error());
    if (!policy->syscalls.empty() && o.security.seccomp == "unconfined")
        return fail(make_error(Code::bad_input, "policy: syscalls: changes a seccomp profile, and --seccomp is unconfined",
                               path));
    // The covers are mounts attached from the host after the sandbox's namespaces are
    // made, so not locked: with SYS_ADMIN, root inside could take them off.
    if (!policy->files.empty() && (o.security.caps & (uint64_t(1) << CAP_SYS_ADMIN)))
        return fail(make_error(Code::bad_input, "policy: files: read-only and hidden paths cannot hold with SYS_ADMIN kept "
                                            "(--cap-add): root inside could unmount or remount them", path));
    char* abs = ::realpath(path.c_str(), nullptr);
    o.policy = abs ? abs : path;
    std::free(abs);
    tighten_limits(policy->limits, o);
    o.guard = std::make_shared<const guard::Policy>(std::move(*policy));
    return {};
}

Result<std::shared_ptr<const guard::Policy>> policy_of_state(const nlohmann::json& state) {
    if (!state.contains("guard") || state["guard"].is_null()) return std::shared_ptr<const guard::Policy>();
    try {
        const auto& g = state["guard"];
        auto p = std::make_shared<guard::Policy>();
        const auto& files = g.at("files");
        p->files.read_only = files.value("read_only", std::vector<std::string>{});
        p->files.read_write = files.value("read_write", std::vector<std::string>{});
        p->files.hidden = files.value("hidden", std::vector<std::string>{});
        const auto& sys = g.value("syscalls", nlohmann::json::object());
        p->syscalls.allow = sys.value("allow", std::vector<std::string>{});
        p->syscalls.deny = sys.value("deny", std::vector<std::string>{});
        p->scrub = g.value("scrub", std::vector<std::string>{});
        // A fork gets the egress its parent has now (live changes included).
        auto network = guard::network_from_record(g.value("network", nlohmann::json::object()));
        if (!network) return fail(network.error());
        p->network = std::move(*network);
        p->digest = g.value("digest", "");
        return std::shared_ptr<const guard::Policy>(std::move(p));
    } catch (const nlohmann::json::exception& e) {
        return fail(make_error(Code::bad_input, std::string("the sandbox's recorded policy is malformed: ") + e.what(),
                               state.value("id", "")));
    }
}

}  // namespace dsec::sandbox
