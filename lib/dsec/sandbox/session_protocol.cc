#include "dsec/sandbox/session_protocol.h"

#include <algorithm>
#include <cctype>

namespace dsec::sandbox::session_protocol {

std::string single_quoted(const std::string& text) {
    std::string q = "'";
    for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string script(const std::string& command, const std::string& nonce, bool pty) {
    std::string status = "printf '\\n" + nonce + " %d\\n' \"$?\" >&9";
    // The command runs in a function so that the trap on URG (sent at a timeout) can
    // end it with `return`, the rest of its list included, while it waits in the shell
    // itself (read, wait, a loop of builtins) or after what it started was killed. The
    // flag keeps a late signal from returning at the top level, which ends some shells.
    return "trap " + single_quoted(status) + " EXIT\n" +
           "trap '[ \"${_dsec_command-}\" = 1 ] && return 137' URG\n" +
           "_dsec_run() { _dsec_command=1; command eval " + single_quoted(command + "\n") +
           (pty ? " <&1 8>&-" : " </dev/null") + "; set -- \"$?\"; _dsec_command=; return \"$1\"; }\n" +
           "_dsec_run\n" + status + "\n";
}

std::optional<int> find_status(const std::string& tail, const std::string& nonce) {
    std::string tag = "\n" + nonce + " ";
    for (auto at = tail.find(tag); at != std::string::npos; at = tail.find(tag, at + 1)) {
        auto end = tail.find('\n', at + tag.size());
        if (end == std::string::npos) return std::nullopt;
        std::string digits = tail.substr(at + tag.size(), end - at - tag.size());
        if (!digits.empty() && digits.size() <= 3 &&
            std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit((unsigned char)c); }))
            return std::stoi(digits);
    }
    return std::nullopt;
}

}  // namespace dsec::sandbox::session_protocol
