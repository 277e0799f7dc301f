// What a session's shell is sent for one command and how its status is found again
// (session.h describes the channels).
#pragma once

#include <optional>
#include <string>

namespace dsec::sandbox::session_protocol {

/// `text` inside single quotes for a POSIX shell ('\'' for each quote).
std::string single_quoted(const std::string& text);

/// What the shell reads for one command: `command` run in the current shell (cd and
/// variables stay) through `command eval` (a syntax error does not end a POSIX shell)
/// inside a function that SIGURG (trapped) returns from with status 137,
/// with stdin from /dev/null (it cannot eat the next command), or with `pty` from the
/// terminal on stdout and without the terminal's master (descriptor 8); then its status
/// written to descriptor 9 as "\n<nonce> <status>\n", and the same from an EXIT trap for
/// `exit`.
std::string script(const std::string& command, const std::string& nonce, bool pty = false);

/// The status on the status channel's `tail` for `nonce`: a whole line "<nonce> <0-255>"
/// after a newline; none while there is no such line.
std::optional<int> find_status(const std::string& tail, const std::string& nonce);

}  // namespace dsec::sandbox::session_protocol
