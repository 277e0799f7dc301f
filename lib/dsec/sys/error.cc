#include "dsec/sys/error.h"

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

namespace dsec {

Error Error::context(std::string what) && {
    message = message.empty() ? std::move(what) : what + ": " + message;
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
    if (!op.empty()) r["op"] = op;
    if (!path.empty()) r["path"] = path;
    if (err != 0) {
        r["errno"] = err;
        r["errno_name"] = errno_name(err);
    }
    return r;
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
