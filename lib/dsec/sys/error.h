// Errors as values: what failed (a stable code), the errno, the operation, the path,
// and context added on the way up. Carried with std::expected.
#pragma once

#include <expected>
#include <string>
#include <utility>

#include <nlohmann/json_fwd.hpp>

namespace dsec {

/// A failure with enough detail for a person and a program: `code` is stable and
/// machine-readable ("io", "usage", "not_found", "bad_input", ...), `err` is the errno
/// (0 when there is none), `op` the failing operation, `path` what it acted on.
struct Error {
    std::string code;
    int err = 0;
    std::string op;
    std::string path;
    std::string message;
    /// The sandbox, rootfs or layer the failure concerns, when there is one (the record's
    /// "id", so the end of a pipeline can tell which item of a batch failed).
    std::string id;

    /// Prepends a step to the message ("building layer: ..."), returns the error itself.
    Error context(std::string what) &&;
    /// Names the item the failure concerns, unless one is named already.
    Error about(std::string subject) &&;
    /// The human line: "op path: message: strerror".
    std::string describe() const;
    /// The `{"type":"error","v":1,...}` record.
    nlohmann::json to_record() const;
    /// Every field as is ({code, errno, op, path, message, id}), to hand an Error from one
    /// process to another; from_fields() reads it back (a field missing or of the wrong
    /// type is left empty; no code at all gives "io").
    nlohmann::json to_fields() const;
    static Error from_fields(const nlohmann::json& fields);
};

template <typename T>
using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

/// An Error from the current errno; call right after the failing syscall.
Error sys_error(std::string op, std::string path = {});
/// An Error with an explicit errno value.
Error errno_error(int err, std::string op, std::string path = {});
/// An Error without an errno: code plus message.
Error make_error(std::string code, std::string message, std::string path = {});

/// std::unexpected shorthand so a function can `return fail(sys_error(...))`.
inline std::unexpected<Error> fail(Error e) { return std::unexpected<Error>(std::move(e)); }

/// Name of an errno value ("ENOENT"), or "E<n>" when unknown.
std::string errno_name(int err);

}  // namespace dsec
