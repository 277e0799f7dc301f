// What a policy becomes: its normalised record, and the seccomp profile it makes of a
// base profile (compiled and cached like any profile, seccomp.h).
#include <algorithm>

#include "dsec/guard/policy.h"
#include "dsec/guard/policy_filter.h"
#include "dsec/guard/policy_parse.h"
#include "dsec/guard/seccomp.h"

namespace dsec::guard {

using nlohmann::json;

json policy_record(const Policy& p) {
    json limits = json::object();
    if (p.limits.memory) limits["memory"] = p.limits.memory;
    if (p.limits.cpus > 0) limits["cpus"] = p.limits.cpus;
    if (p.limits.pids) limits["pids"] = p.limits.pids;
    if (p.limits.disk) limits["disk"] = p.limits.disk;
    if (p.limits.nofile) limits["nofile"] = p.limits.nofile;
    json allow = json::array();
    for (const auto& d : p.network.allow) allow.push_back(destination_record(d));
    return {{"digest", p.digest},
            {"files", {{"read_only", p.files.read_only}, {"read_write", p.files.read_write}, {"hidden", p.files.hidden}}},
            {"syscalls", {{"allow", p.syscalls.allow}, {"deny", p.syscalls.deny}}},
            {"network", {{"egress", "deny"}, {"allow", allow}}},
            {"limits", limits},
            {"scrub", p.scrub}};
}

Result<std::string> seccomp_profile_with(std::string_view base_profile, const SyscallRules& rules) {
    json base = json::parse(base_profile, nullptr, false);
    if (base.is_discarded() || !base.is_object() || !base.contains("rules") || !base["rules"].is_array())
        return fail(make_error(Code::bad_input, "the base seccomp profile is not a profile object with \"rules\""));
    auto never = never_allowed_syscalls();
    for (size_t i = 0; i < rules.allow.size(); i++)
        if (std::find(never.begin(), never.end(), rules.allow[i]) != never.end())
            return fail(policy_error("syscalls.allow[" + std::to_string(i) + "]",
                                     "\"" + rules.allow[i] + "\" can never be allowed"));
    auto named = [&](const std::string& s) {
        return std::find(rules.allow.begin(), rules.allow.end(), s) != rules.allow.end() ||
               std::find(rules.deny.begin(), rules.deny.end(), s) != rules.deny.end();
    };
    // Each named call leaves every base rule (a conditional refusal of clone included):
    // the policy's word on it is the only one left.
    json kept = json::array();
    for (json rule : base["rules"]) {
        if (!rule.is_object() || !rule.contains("syscalls") || !rule["syscalls"].is_array()) {
            kept.push_back(rule);
            continue;
        }
        json names = json::array();
        for (const auto& s : rule["syscalls"])
            if (!s.is_string() || !named(s.get<std::string>())) names.push_back(s);
        if (names.empty()) continue;
        rule["syscalls"] = names;
        kept.push_back(rule);
    }
    // A base that refuses by default (a custom profile) needs the allowed calls named.
    if (!rules.allow.empty() && base.value("default", "allow") != "allow")
        kept.push_back({{"syscalls", rules.allow}, {"action", "allow"}, {"reason", "allowed by the sandbox's policy"}});
    if (!rules.deny.empty())
        kept.push_back({{"syscalls", rules.deny},
                        {"action", "errno"},
                        {"errno", "EPERM"},
                        {"reason", "denied by the sandbox's policy"}});
    base["rules"] = kept;
    base["about"] = "a base profile changed by a dsec-guard policy";
    return base.dump();
}

Result<std::string> cached_policy_filter(const std::string& run_dir, std::string_view base_profile,
                                         const SyscallRules& rules) {
    // Not a profile's text (those are JSON objects), so no profile shares its digest.
    std::string key = "a base profile changed by a dsec-guard policy: ";
    key += json{{"allow", rules.allow}, {"deny", rules.deny}}.dump();
    key += '\n';
    key += base_profile;
    return cached_seccomp_filter(run_dir, key, [&] { return seccomp_profile_with(base_profile, rules); });
}

Result<json> check_record(const Policy& policy, const std::string& path) {
    auto text = seccomp_profile_with(default_seccomp_profile(), policy.syscalls);
    if (!text) return fail(text.error());
    auto profile = parse_seccomp_profile(*text);
    if (!profile) return fail(profile.error());
    auto bpf = compile_seccomp(*profile);
    if (!bpf) return fail(bpf.error());
    // An allowed name the default never refuses changes nothing: said, so that a policy
    // author sees it (a typo of a refused call's name, or a call allowed already).
    auto base = parse_seccomp_profile(default_seccomp_profile());
    if (!base) return fail(base.error());
    json unchanged = json::array();
    for (const auto& name : policy.syscalls.allow) {
        bool refused = false;
        for (const auto& rule : base->rules)
            refused = refused || std::find(rule.syscalls.begin(), rule.syscalls.end(), name) != rule.syscalls.end();
        if (!refused) unchanged.push_back(name);
    }
    json out = {{"type", "policy"}, {"v", 1}, {"path", path}};
    out.update(policy_record(policy));
    out["seccomp"] = {{"base", "default"}, {"instructions", bpf->size() / 8}, {"allowed_already", unchanged}};
    return out;
}

}  // namespace dsec::guard
