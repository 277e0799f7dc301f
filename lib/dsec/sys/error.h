// Errors as values: what failed (a stable code), the errno, the operation, the path,
// and context added on the way up. Carried with std::expected.
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace dsec {

/// What failed, as a program tells failures apart: a closed set, written in records by
/// its name (code_name), which is the enumerator's own.
enum class Code {
    io,                   // an I/O or system call failed (the default)
    bad_input,            // input (a record, a file, an argument's value) is malformed
    usage,                // the command line is wrong
    not_found,
    not_running,          // the sandbox or session is not running
    corrupt,              // stored data does not match what it claims
    unsupported,          // the kernel or the host lacks a feature
    busy,
    internal,
    helper_failed,        // a helper program exited with an error
    unresolved,           // a name does not resolve
    exhausted,            // a pool (ids, address slots) is used up
    not_mounted,
    ambiguous,
    unsupported_version,
    too_many_layers,
    too_many,
    too_large,
    seccomp,
    permission,
    interrupted,
    exists,
    exec,
    copy_failed,
    bpf,
    aborted,
    no_space,
    read_only,
    mount_failed,         // the kernel refused a mount (its message kept)
    timed_out,            // a deadline passed before the work was done
};

/// The code's name ("not_found"), as records carry it.
std::string_view code_name(Code c);
/// The code named `name`, or nullopt for a name this build does not know.
std::optional<Code> code_from_name(std::string_view name);

/// A failure with enough detail for a person and a program: `code` is stable and
/// machine-readable, `err` is the errno (0 when there is none), `op` the failing
/// operation, `path` what it acted on, `message` what went wrong; what the callers were
/// doing (`steps`) and the input field at fault (`field`) are kept apart from it.
struct Error {
    Code code = Code::io;
    int err = 0;
    std::string op;
    std::string path;
    std::string message;
    /// The sandbox, rootfs or layer the failure concerns, when there is one (the record's
    /// "id", so the end of a pipeline can tell which item of a batch failed).
    std::string id;
    /// What the callers were doing when it failed, outermost first ("building layer",
    /// "applying the policy"): the record's "context".
    std::vector<std::string> steps;
    /// The input field the failure concerns ("limits.pids", a record's "id"), when there
    /// is one: the record's "field".
    std::string field;

    /// Adds a step the caller was taking (it goes before those already there), returns
    /// the error itself.
    Error context(std::string what) &&;
    /// Names the item the failure concerns, unless one is named already.
    Error about(std::string subject) &&;
    /// Names the input field at fault, unless one is named already.
    Error in_field(std::string name) &&;
    /// The steps and the message, as people read them: "building layer: bad magic".
    std::string detail() const;
    /// The human line: "op path: steps: message: strerror".
    std::string describe() const;
    /// The `{"type":"error","v":1,...}` record: "message" is the human line, and
    /// "context" (the steps) and "field" are fields of their own when there are any.
    nlohmann::json to_record() const;
    /// Every field as is ({code, errno, op, path, message, id, context, field}), to hand
    /// an Error from one process to another; from_fields() reads it back (a field missing
    /// or of the wrong type is left empty; no code at all, or one this build does not
    /// know, gives io).
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
Error make_error(Code code, std::string message, std::string path = {});
/// Input refused as malformed or hostile (an archive entry, a manifest): Code::bad_input.
inline Error bad_input(std::string why, std::string where = {}) {
    return make_error(Code::bad_input, std::move(why), std::move(where));
}

/// std::unexpected shorthand so a function can `return fail(sys_error(...))`.
inline std::unexpected<Error> fail(Error e) { return std::unexpected<Error>(std::move(e)); }

/// Name of an errno value ("ENOENT"), or "E<n>" when unknown.
std::string errno_name(int err);

}  // namespace dsec
