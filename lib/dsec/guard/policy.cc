// Reading a policy document: JSON to a checked Policy, each error naming its field.
#include "dsec/guard/policy.h"

#include <seccomp.h>

#include <algorithm>
#include <cmath>

#include "dsec/guard/policy_parse.h"
#include "dsec/sys/parse.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/sha256.h"

namespace dsec::guard {

using nlohmann::json;

namespace {

constexpr std::string_view kNeverAllowed[] = {
    "mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    "pivot_root", "open_by_handle_at", "name_to_handle_at", "bpf", "init_module", "finit_module",
    "delete_module", "kexec_load", "kexec_file_load"};

// "/a/b": absolute, no empty, "." or ".." component, no trailing slash (but "/").
Result<std::string> clean_path(const json& v, const std::string& where) {
    if (!v.is_string()) return fail(policy_error(where, "not a string"));
    std::string p = v.get<std::string>();
    if (p.empty() || p[0] != '/') return fail(policy_error(where, "not an absolute path: \"" + p + "\""));
    if (p.size() >= 4096 || p.find('\0') != std::string::npos) return fail(policy_error(where, "not a usable path"));
    if (p == "/") return p;
    if (p.back() == '/') return fail(policy_error(where, "trailing slash in \"" + p + "\""));
    for (size_t at = 1; at <= p.size();) {
        size_t end = std::min(p.find('/', at), p.size());
        std::string_view part(p.data() + at, end - at);
        if (part.empty() || part == "." || part == "..")
            return fail(policy_error(where, "\"" + p + "\" has an empty, . or .. component"));
        at = end + 1;
    }
    return p;
}

// `inner` is `outer` or lies beneath it.
bool beneath(const std::string& inner, const std::string& outer) {
    if (outer == "/") return true;
    return inner == outer || (inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
                              inner[outer.size()] == '/');
}

// An array of paths, each listed once; `field` names it in errors.
Result<std::vector<std::string>> path_list(const json& list, const std::string& field) {
    std::vector<std::string> out;
    if (!list.is_array()) return fail(policy_error(field, "must be an array of paths"));
    for (size_t i = 0; i < list.size(); i++) {
        auto p = clean_path(list[i], field + "[" + std::to_string(i) + "]");
        if (!p) return fail(p.error());
        if (std::find(out.begin(), out.end(), *p) != out.end())
            return fail(policy_error(field + "[" + std::to_string(i) + "]", "\"" + *p + "\" is listed twice"));
        out.push_back(std::move(*p));
    }
    return out;
}

Result<FileRules> parse_files(const json& j) {
    if (auto k = only_keys(j, {"read_only", "read_write", "hidden"}, "files"); !k) return fail(k.error());
    FileRules f;
    for (auto [key, list] : {std::pair{"read_only", &f.read_only}, std::pair{"read_write", &f.read_write},
                             std::pair{"hidden", &f.hidden}}) {
        if (!j.contains(key)) continue;
        auto paths = path_list(j.at(key), std::string("files.") + key);
        if (!paths) return fail(paths.error());
        *list = std::move(*paths);
    }
    for (size_t i = 0; i < f.hidden.size(); i++) {
        std::string where = "files.hidden[" + std::to_string(i) + "]";
        if (f.hidden[i] == "/") return fail(policy_error(where, "\"/\" cannot be hidden"));
        for (auto* other : {&f.read_only, &f.read_write})
            for (auto& p : *other)
                if (beneath(p, f.hidden[i]))
                    return fail(policy_error(where, "\"" + p + "\" (read_only or read_write) lies in it"));
    }
    for (size_t i = 0; i < f.read_write.size(); i++) {
        std::string where = "files.read_write[" + std::to_string(i) + "]";
        if (std::find(f.read_only.begin(), f.read_only.end(), f.read_write[i]) != f.read_only.end())
            return fail(policy_error(where, "\"" + f.read_write[i] + "\" is read_only too"));
        // The baseline keeps these read-only; a policy only adds to the baseline.
        for (auto base : {"/proc", "/sys"})
            if (beneath(f.read_write[i], base))
                return fail(policy_error(where, "\"" + f.read_write[i] + "\" lies in " + base +
                                                    ", which stays as the baseline has it"));
    }
    return f;
}

Result<std::vector<std::string>> syscall_list(const json& j, const char* key) {
    std::vector<std::string> out;
    if (!j.contains(key)) return out;
    std::string field = std::string("syscalls.") + key;
    if (!j.at(key).is_array()) return fail(policy_error(field, "must be an array of syscall names"));
    for (size_t i = 0; i < j.at(key).size(); i++) {
        std::string where = field + "[" + std::to_string(i) + "]";
        const json& v = j.at(key)[i];
        if (!v.is_string()) return fail(policy_error(where, "not a string"));
        std::string name = v.get<std::string>();
        if (seccomp_syscall_resolve_name(name.c_str()) == __NR_SCMP_ERROR)
            return fail(policy_error(where, "unknown syscall \"" + name + "\""));
        if (std::find(out.begin(), out.end(), name) != out.end())
            return fail(policy_error(where, "\"" + name + "\" is listed twice"));
        out.push_back(std::move(name));
    }
    return out;
}

Result<SyscallRules> parse_syscalls(const json& j) {
    if (auto k = only_keys(j, {"allow", "deny"}, "syscalls"); !k) return fail(k.error());
    SyscallRules s;
    auto allow = syscall_list(j, "allow");
    if (!allow) return fail(allow.error());
    auto deny = syscall_list(j, "deny");
    if (!deny) return fail(deny.error());
    s.allow = std::move(*allow);
    s.deny = std::move(*deny);
    auto never = never_allowed_syscalls();
    for (size_t i = 0; i < s.allow.size(); i++) {
        std::string where = "syscalls.allow[" + std::to_string(i) + "]";
        if (std::find(never.begin(), never.end(), s.allow[i]) != never.end())
            return fail(policy_error(where, "\"" + s.allow[i] + "\" can never be allowed (see dsec-guard(1))"));
        if (std::find(s.deny.begin(), s.deny.end(), s.allow[i]) != s.deny.end())
            return fail(policy_error(where, "\"" + s.allow[i] + "\" is denied too"));
    }
    return s;
}

// A size as a string with units ("1G") or a whole number of bytes.
Result<uint64_t> size_field(const json& j, const char* key) {
    std::string where = std::string("limits.") + key;
    const json& v = j.at(key);
    uint64_t n = 0;
    if (v.is_number_unsigned()) {
        n = v.get<uint64_t>();
    } else if (v.is_string()) {
        auto s = parse::parse_size(v.get<std::string>());
        if (!s) return fail(policy_error(where, s.error().detail()));
        n = *s;
    } else {
        return fail(policy_error(where, "must be a size (\"512M\") or a number of bytes"));
    }
    if (n == 0) return fail(policy_error(where, "must be above zero"));
    return n;
}

Result<uint64_t> count_field(const json& j, const char* key) {
    std::string where = std::string("limits.") + key;
    const json& v = j.at(key);
    if (!v.is_number_unsigned() || v.get<uint64_t>() == 0) return fail(policy_error(where, "must be a whole number above zero"));
    return v.get<uint64_t>();
}

Result<PolicyLimits> parse_limits(const json& j) {
    if (auto k = only_keys(j, {"memory", "cpus", "pids", "disk", "nofile"}, "limits"); !k) return fail(k.error());
    PolicyLimits l;
    for (auto [key, out] : {std::pair{"memory", &l.memory}, std::pair{"disk", &l.disk}}) {
        if (!j.contains(key)) continue;
        auto n = size_field(j, key);
        if (!n) return fail(n.error());
        *out = *n;
    }
    for (auto [key, out] : {std::pair{"pids", &l.pids}, std::pair{"nofile", &l.nofile}}) {
        if (!j.contains(key)) continue;
        auto n = count_field(j, key);
        if (!n) return fail(n.error());
        *out = *n;
    }
    if (l.pids && l.pids < kMinPids)
        return fail(policy_error("limits.pids", "must be at least " + std::to_string(kMinPids) + " (the init and one more)"));
    if (j.contains("cpus")) {
        const json& v = j.at("cpus");
        if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 4096)
            return fail(policy_error("limits.cpus", "must be a number of CPUs above 0 and at most 4096"));
        l.cpus = v.get<double>();
    }
    return l;
}

}  // namespace

Error policy_error(const std::string& field, const std::string& what) {
    return make_error(Code::bad_input, "policy: " + field + ": " + what).in_field(field);
}

Status only_keys(const json& j, std::initializer_list<std::string_view> known, const std::string& where) {
    if (!j.is_object()) return fail(policy_error(where, "not an object"));
    for (const auto& [key, _] : j.items())
        if (std::find(known.begin(), known.end(), key) == known.end())
            return fail(policy_error(where, "unknown key \"" + key + "\""));
    return {};
}

std::span<const std::string_view> never_allowed_syscalls() { return kNeverAllowed; }

Result<Policy> parse_policy(std::string_view json_text) {
    json j = json::parse(json_text, nullptr, false);
    if (j.is_discarded()) return fail(policy_error("top level", "not valid JSON"));
    if (auto k = only_keys(j, {"about", "files", "syscalls", "network", "limits", "scrub"}, "top level"); !k)
        return fail(k.error());
    Policy p;
    if (j.contains("about")) {
        if (!j["about"].is_string()) return fail(policy_error("about", "not a string"));
        p.about = j["about"].get<std::string>();
    }
    if (j.contains("files")) {
        auto f = parse_files(j["files"]);
        if (!f) return fail(f.error());
        p.files = std::move(*f);
    }
    if (j.contains("syscalls")) {
        auto s = parse_syscalls(j["syscalls"]);
        if (!s) return fail(s.error());
        p.syscalls = std::move(*s);
    }
    if (j.contains("network")) {
        auto n = parse_network(j["network"]);
        if (!n) return fail(n.error());
        p.network = std::move(*n);
    }
    if (j.contains("limits")) {
        auto l = parse_limits(j["limits"]);
        if (!l) return fail(l.error());
        p.limits = *l;
    }
    if (j.contains("scrub")) {
        auto s = path_list(j["scrub"], "scrub");
        if (!s) return fail(s.error());
        p.scrub = std::move(*s);
    }
    Sha256 h;
    h.update(json_text);
    p.digest = h.hex();
    return p;
}

Result<Policy> load_policy(const std::string& path) {
    auto text = fs::read_file(path);
    if (!text) return fail(std::move(text.error()).context("reading the policy"));
    auto p = parse_policy(*text);
    if (!p) {
        Error e = p.error();
        e.path = path;
        return fail(std::move(e));
    }
    return p;
}

}  // namespace dsec::guard
