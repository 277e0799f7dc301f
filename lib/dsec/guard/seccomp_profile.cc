// Reading a seccomp profile: JSON to a checked Profile. Every name is resolved here, so
// that compile_seccomp meets no surprise and a bad profile never half-compiles.
#include <seccomp.h>

#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "dsec/guard/default_seccomp_json.h"
#include "dsec/guard/seccomp.h"

namespace dsec::guard {

using nlohmann::json;

namespace {

// The one name table of each closed set.
constexpr std::pair<Action, std::string_view> kActionNames[] = {
    {Action::allow, "allow"}, {Action::errno_return, "errno"}, {Action::kill_process, "kill_process"},
    {Action::kill_thread, "kill_thread"}, {Action::trap, "trap"}, {Action::log, "log"}};
constexpr std::pair<ArgOp, std::string_view> kOpNames[] = {
    {ArgOp::eq, "eq"}, {ArgOp::ne, "ne"}, {ArgOp::lt, "lt"}, {ArgOp::le, "le"}, {ArgOp::gt, "gt"},
    {ArgOp::ge, "ge"}, {ArgOp::masked_eq, "masked_eq"}, {ArgOp::not_in, "not_in"}};

template <typename E, size_t N>
std::optional<E> lookup(const std::pair<E, std::string_view> (&table)[N], std::string_view name) {
    for (const auto& [value, n] : table)
        if (n == name) return value;
    return std::nullopt;
}

Error bad(const std::string& where, const std::string& what) {
    return make_error(Code::bad_input, "seccomp profile: " + where + ": " + what);
}

// Refuses keys outside `known`: a typo ("arg" for "args") must not drop a condition.
Status only_profile_keys(const json& j, std::initializer_list<std::string_view> known, const std::string& where) {
    if (!j.is_object()) return fail(bad(where, "not an object"));
    for (const auto& [key, _] : j.items()) {
        bool ok = false;
        for (auto k : known) ok = ok || key == k;
        if (!ok) return fail(bad(where, "unknown key \"" + key + "\""));
    }
    return {};
}

Result<uint64_t> number(const json& j, const char* key, const std::string& where) {
    if (!j.contains(key)) return fail(bad(where, std::string("missing \"") + key + "\""));
    const json& v = j.at(key);
    if (!v.is_number_unsigned()) return fail(bad(where, std::string("\"") + key + "\" is not a non-negative integer"));
    return v.get<uint64_t>();
}

Result<std::string> text(const json& j, const char* key, const std::string& where) {
    if (!j.contains(key) || !j.at(key).is_string() || j.at(key).get<std::string>().empty())
        return fail(bad(where, std::string("\"") + key + "\" must be a non-empty string"));
    return j.at(key).get<std::string>();
}

Result<Action> action_named(const json& j, const char* key, const std::string& where) {
    auto name = text(j, key, where);
    if (!name) return fail(name.error());
    auto action = lookup(kActionNames, *name);
    if (!action) return fail(bad(where, "unknown action \"" + *name + "\""));
    return *action;
}

Result<int> errno_named(const std::string& name, const std::string& where) {
    for (int e = 1; e < 4096; e++)
        if (errno_name(e) == name) return e;
    return fail(bad(where, "unknown errno \"" + name + "\""));
}

Result<ArgMatch> parse_arg(const json& j, const std::string& where) {
    if (auto k = only_profile_keys(j, {"index", "op", "value", "mask", "values"}, where); !k) return fail(k.error());
    ArgMatch arg;
    auto index = number(j, "index", where);
    if (!index) return fail(index.error());
    if (*index > 5) return fail(bad(where, "argument index " + std::to_string(*index) + " is not 0-5"));
    arg.index = unsigned(*index);
    auto op_name = text(j, "op", where);
    if (!op_name) return fail(op_name.error());
    auto op = lookup(kOpNames, *op_name);
    if (!op) return fail(bad(where, "unknown op \"" + *op_name + "\""));
    arg.op = *op;
    bool masked = arg.op == ArgOp::masked_eq || arg.op == ArgOp::not_in;
    if (masked) {
        auto mask = number(j, "mask", where);
        if (!mask) return fail(mask.error());
        arg.mask = *mask;
    } else if (j.contains("mask")) {
        return fail(bad(where, "\"mask\" goes with masked_eq and not_in only"));
    }
    if (arg.op != ArgOp::not_in) {
        if (j.contains("values")) return fail(bad(where, "\"values\" goes with not_in only"));
        auto value = number(j, "value", where);
        if (!value) return fail(value.error());
        arg.value = *value;
        return arg;
    }
    if (j.contains("value")) return fail(bad(where, "not_in takes \"values\", not \"value\""));
    if (!j.contains("values") || !j.at("values").is_array() || j.at("values").empty())
        return fail(bad(where, "not_in needs a non-empty \"values\" array"));
    for (const json& v : j.at("values")) {
        if (!v.is_number_unsigned()) return fail(bad(where, "\"values\" holds a non-integer"));
        arg.values.push_back(v.get<uint64_t>());
    }
    return arg;
}

Status parse_syscalls(const json& j, Rule& rule, const std::string& where) {
    if (!j.contains("syscalls") || !j.at("syscalls").is_array() || j.at("syscalls").empty())
        return fail(bad(where, "\"syscalls\" must be a non-empty array of names"));
    for (const json& s : j.at("syscalls")) {
        if (!s.is_string()) return fail(bad(where, "\"syscalls\" holds a non-string"));
        std::string name = s.get<std::string>();
        // Negative numbers other than __NR_SCMP_ERROR name calls that exist on other
        // architectures only (iopl on arm64): kept, and skipped by libseccomp.
        int nr = seccomp_syscall_resolve_name(name.c_str());
        if (nr == __NR_SCMP_ERROR) return fail(bad(where, "unknown syscall \"" + name + "\""));
        rule.syscalls.push_back(std::move(name));
        rule.numbers.push_back(nr);
    }
    return {};
}

Result<Rule> parse_rule(const json& j, const std::string& where, Action default_action) {
    if (auto k = only_profile_keys(j, {"syscalls", "args", "action", "errno", "reason"}, where); !k) return fail(k.error());
    Rule rule;
    if (auto s = parse_syscalls(j, rule, where); !s) return fail(s.error());
    auto action = action_named(j, "action", where);
    if (!action) return fail(action.error());
    rule.action = *action;
    if (rule.action == default_action) return fail(bad(where, "the action is the default action"));
    if (rule.action == Action::errno_return) {
        auto name = text(j, "errno", where);
        if (!name) return fail(name.error());
        auto err = errno_named(*name, where);
        if (!err) return fail(err.error());
        rule.err = *err;
    } else if (j.contains("errno")) {
        return fail(bad(where, "\"errno\" goes with action errno only"));
    }
    auto reason = text(j, "reason", where);
    if (!reason) return fail(reason.error());
    rule.reason = *reason;
    if (j.contains("args")) {
        if (!j.at("args").is_array()) return fail(bad(where, "\"args\" must be an array"));
        std::set<unsigned> seen;
        size_t n = 0;
        for (const json& a : j.at("args")) {
            auto arg = parse_arg(a, where + ": args[" + std::to_string(n++) + "]");
            if (!arg) return fail(arg.error());
            if (!seen.insert(arg->index).second)
                return fail(bad(where, "argument " + std::to_string(arg->index) + " is compared twice"));
            rule.args.push_back(std::move(*arg));
        }
        size_t not_in = 0;
        for (const auto& a : rule.args) not_in += a.op == ArgOp::not_in;
        if (not_in > 1) return fail(bad(where, "at most one not_in condition per rule"));
    }
    return rule;
}

}  // namespace

std::string_view default_seccomp_profile() { return detail::kDefaultSeccompJson; }

Result<Profile> parse_seccomp_profile(std::string_view json_text) {
    json j = json::parse(json_text, nullptr, false);
    if (j.is_discarded()) return fail(bad("top level", "not valid JSON"));
    if (auto k = only_profile_keys(j, {"about", "default", "bad_arch", "rules"}, "top level"); !k) return fail(k.error());
    Profile profile;
    auto def = action_named(j, "default", "\"default\"");
    if (!def) return fail(def.error());
    if (*def == Action::errno_return) return fail(bad("\"default\"", "errno cannot be the default action"));
    profile.default_action = *def;
    auto bad_arch = action_named(j, "bad_arch", "\"bad_arch\"");
    if (!bad_arch) return fail(bad_arch.error());
    if (*bad_arch != Action::kill_process && *bad_arch != Action::kill_thread && *bad_arch != Action::trap)
        return fail(bad("\"bad_arch\"", "must be kill_process, kill_thread or trap"));
    profile.bad_arch = *bad_arch;
    if (!j.contains("rules") || !j.at("rules").is_array()) return fail(bad("top level", "\"rules\" must be an array"));
    size_t index = 0;
    for (const json& r : j.at("rules")) {
        auto rule = parse_rule(r, "rule " + std::to_string(index++), profile.default_action);
        if (!rule) return fail(rule.error());
        profile.rules.push_back(std::move(*rule));
    }
    return profile;
}

}  // namespace dsec::guard
