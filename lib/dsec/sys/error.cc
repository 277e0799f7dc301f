#include "dsec/sys/error.h"

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

namespace dsec {

Error Error::context(std::string what) && {
    message = message.empty() ? std::move(what) : what + ": " + message;
    return std::move(*this);
}

Error Error::about(std::string subject) && {
    if (id.empty()) id = std::move(subject);
    return std::move(*this);
}

std::string Error::describe() const {
    std::string line = op;
    if (!path.empty()) line += (line.empty() ? "" : " ") + path;
    if (!message.empty()) line += (line.empty() ? "" : ": ") + message;
    if (err != 0) line += (line.empty() ? "" : ": ") + std::string(std::strerror(err));
    return line;
}

nlohmann::json Error::to_record() const {
    nlohmann::json r = {{"type", "error"}, {"v", 1}, {"code", code}, {"message", describe()}};
    if (!id.empty()) r["id"] = id;
    if (!op.empty()) r["op"] = op;
    if (!path.empty()) r["path"] = path;
    if (err != 0) {
        r["errno"] = err;
        r["errno_name"] = errno_name(err);
    }
    return r;
}

nlohmann::json Error::to_fields() const {
    return {{"code", code}, {"errno", err}, {"op", op}, {"path", path}, {"message", message}, {"id", id}};
}

Error Error::from_fields(const nlohmann::json& f) {
    auto text = [&](const char* key) {
        return f.is_object() && f.contains(key) && f[key].is_string() ? f[key].get<std::string>() : std::string();
    };
    Error e{text("code"), 0, text("op"), text("path"), text("message"), text("id")};
    if (f.is_object() && f.contains("errno") && f["errno"].is_number_integer()) e.err = f["errno"].get<int>();
    if (e.code.empty()) e.code = "io";
    return e;
}

static std::string code_for_errno(int err) {
    switch (err) {
        case ENOENT: return "not_found";
        case EEXIST: return "exists";
        case EACCES:
        case EPERM: return "permission";
        case ENOSPC:
        case EDQUOT: return "no_space";
        case EROFS: return "read_only";
        case EBUSY: return "busy";
        default: return "io";
    }
}

Error errno_error(int err, std::string op, std::string path) {
    return Error{code_for_errno(err), err, std::move(op), std::move(path), {}};
}

Error sys_error(std::string op, std::string path) {
    return errno_error(errno, std::move(op), std::move(path));
}

Error make_error(std::string code, std::string message, std::string path) {
    return Error{std::move(code), 0, {}, std::move(path), std::move(message)};
}

std::string errno_name(int err) {
    if (const char* name = strerrorname_np(err)) return std::string(name);
    std::string unknown = "E";
    unknown += std::to_string(err);
    return unknown;
}

}  // namespace dsec
