#include "dsec/sys/error.h"

#include <cerrno>
#include <cstring>
#include <iterator>

#include <nlohmann/json.hpp>

namespace dsec {

namespace {
// The one name table: each Code and the name records carry, which is its own.
constexpr std::pair<Code, std::string_view> kCodeNames[] = {
    {Code::io, "io"}, {Code::bad_input, "bad_input"}, {Code::usage, "usage"}, {Code::not_found, "not_found"},
    {Code::not_running, "not_running"}, {Code::corrupt, "corrupt"}, {Code::unsupported, "unsupported"},
    {Code::busy, "busy"}, {Code::internal, "internal"}, {Code::helper_failed, "helper_failed"},
    {Code::unresolved, "unresolved"}, {Code::exhausted, "exhausted"}, {Code::not_mounted, "not_mounted"},
    {Code::ambiguous, "ambiguous"}, {Code::unsupported_version, "unsupported_version"},
    {Code::too_many_layers, "too_many_layers"}, {Code::too_many, "too_many"}, {Code::too_large, "too_large"},
    {Code::seccomp, "seccomp"}, {Code::permission, "permission"}, {Code::interrupted, "interrupted"},
    {Code::exists, "exists"}, {Code::exec, "exec"}, {Code::copy_failed, "copy_failed"}, {Code::bpf, "bpf"},
    {Code::aborted, "aborted"}, {Code::no_space, "no_space"}, {Code::read_only, "read_only"},
    {Code::mount_failed, "mount_failed"}, {Code::timed_out, "timed_out"},
};
static_assert(std::size(kCodeNames) == size_t(Code::timed_out) + 1, "a Code without a name");
}  // namespace

std::string_view code_name(Code c) {
    for (auto& [code, name] : kCodeNames)
        if (code == c) return name;
    return "io";
}

std::optional<Code> code_from_name(std::string_view name) {
    for (auto& [code, n] : kCodeNames)
        if (n == name) return code;
    return std::nullopt;
}

Error Error::context(std::string what) && {
    steps.insert(steps.begin(), std::move(what));
    return std::move(*this);
}

Error Error::about(std::string subject) && {
    if (id.empty()) id = std::move(subject);
    return std::move(*this);
}

Error Error::in_field(std::string name) && {
    if (field.empty()) field = std::move(name);
    return std::move(*this);
}

std::string Error::detail() const {
    std::string text;
    for (auto& step : steps) text += (text.empty() ? "" : ": ") + step;
    if (!message.empty()) text += (text.empty() ? "" : ": ") + message;
    return text;
}

std::string Error::describe() const {
    std::string line = op;
    if (!path.empty()) line += (line.empty() ? "" : " ") + path;
    if (std::string text = detail(); !text.empty()) line += (line.empty() ? "" : ": ") + text;
    if (err != 0) line += (line.empty() ? "" : ": ") + std::string(std::strerror(err));
    return line;
}

nlohmann::json Error::to_record() const {
    nlohmann::json r = {{"type", "error"}, {"v", 1}, {"code", code_name(code)}, {"message", describe()}};
    if (!id.empty()) r["id"] = id;
    if (!steps.empty()) r["context"] = steps;
    if (!field.empty()) r["field"] = field;
    if (!op.empty()) r["op"] = op;
    if (!path.empty()) r["path"] = path;
    if (err != 0) {
        r["errno"] = err;
        r["errno_name"] = errno_name(err);
    }
    return r;
}

nlohmann::json Error::to_fields() const {
    return {{"code", code_name(code)}, {"errno", err}, {"op", op},         {"path", path},
            {"message", message},       {"id", id},     {"context", steps}, {"field", field}};
}

Error Error::from_fields(const nlohmann::json& f) {
    auto text = [&](const char* key) {
        return f.is_object() && f.contains(key) && f[key].is_string() ? f[key].get<std::string>() : std::string();
    };
    Error e{code_from_name(text("code")).value_or(Code::io), 0, text("op"), text("path"), text("message"), text("id")};
    if (f.is_object() && f.contains("errno") && f["errno"].is_number_integer()) e.err = f["errno"].get<int>();
    e.field = text("field");
    if (f.is_object() && f.contains("context") && f["context"].is_array())
        for (auto& step : f["context"])
            if (step.is_string()) e.steps.push_back(step.get<std::string>());
    return e;
}

static Code code_for_errno(int err) {
    switch (err) {
        case ENOENT: return Code::not_found;
        case EEXIST: return Code::exists;
        case EACCES:
        case EPERM: return Code::permission;
        case ENOSPC:
        case EDQUOT: return Code::no_space;
        case EROFS: return Code::read_only;
        case EBUSY: return Code::busy;
        default: return Code::io;
    }
}

Error errno_error(int err, std::string op, std::string path) {
    return Error{code_for_errno(err), err, std::move(op), std::move(path), {}};
}

Error sys_error(std::string op, std::string path) {
    return errno_error(errno, std::move(op), std::move(path));
}

Error make_error(Code code, std::string message, std::string path) {
    return Error{code, 0, {}, std::move(path), std::move(message)};
}

std::string errno_name(int err) {
    if (const char* name = strerrorname_np(err)) return std::string(name);
    std::string unknown = "E";
    unknown += std::to_string(err);
    return unknown;
}

}  // namespace dsec
