// The seccomp profile of every process in a sandbox: a JSON profile, parsed and checked,
// compiled once by libseccomp into plain BPF and cached under the run directory, so that
// creates and execs only read a file and load it (dsec/ns/seccomp_load.h).
//
// Profile format (lib/dsec/guard/default-seccomp.json is the default):
//   {"default": ACTION, "bad_arch": ACTION, "about": "optional text",
//    "rules": [{"syscalls": ["name", ...], "args": [ARG, ...], "action": ACTION,
//               "errno": "EPERM", "reason": "one line"}, ...]}
// ACTION is allow, errno (with "errno", a name such as "EPERM"), kill_process,
// kill_thread, trap or log. "default" applies to calls no rule matches and cannot be
// errno; "bad_arch" to calls of another ABI (i386, x32) and must be kill_process,
// kill_thread or trap. A rule's "args" (optional, all must hold) compare the raw 64-bit
// argument registers:
//   {"index": 0-5, "op": "eq"|"ne"|"lt"|"le"|"gt"|"ge", "value": N}
//   {"index": 0-5, "op": "masked_eq", "mask": M, "value": N}      (arg & M) == N
//   {"index": 0-5, "op": "not_in", "mask": M, "values": [N, ...]} (arg & M) is none of them
// The kernel reads an `int` or `unsigned int` argument from the low 32 bits only, so a
// rule about one must mask with 4294967295 (masked_eq or not_in): a plain eq would miss
// a call that sets the upper half of the register. Each index appears at most once in
// a rule (a libseccomp limit). Numbers are JSON integers, in decimal.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dsec/sys/error.h"

namespace dsec::guard {

/// What a filter does with a call. One name table in seccomp_profile.cc.
enum class Action { allow, errno_return, kill_process, kill_thread, trap, log };

/// How a rule compares one argument.
enum class ArgOp { eq, ne, lt, le, gt, ge, masked_eq, not_in };

/// One argument condition of a rule.
struct ArgMatch {
    unsigned index = 0;
    ArgOp op = ArgOp::eq;
    uint64_t mask = ~uint64_t(0);   // masked_eq and not_in
    uint64_t value = 0;             // every op but not_in
    std::vector<uint64_t> values;   // not_in
};

/// One rule: the action applies to each of `syscalls` when all `args` hold.
struct Rule {
    std::vector<std::string> syscalls;
    std::vector<int> numbers;   // resolved for the native architecture; < 0: absent there
    std::vector<ArgMatch> args;
    Action action = Action::errno_return;
    int err = 0;                // errno for Action::errno_return
    std::string reason;
};

/// A parsed and checked profile.
struct Profile {
    Action default_action = Action::allow;
    Action bad_arch = Action::kill_process;
    std::vector<Rule> rules;
};

/// The default profile's JSON text, embedded at build time from default-seccomp.json.
std::string_view default_seccomp_profile();

/// Parses and checks a profile. Errors (code "bad_input", naming the rule index and the
/// offending field): malformed JSON, unknown keys, unknown syscall/action/op/errno names,
/// an argument index outside 0-5 or repeated in a rule, a missing reason or value, a rule
/// whose action is the default one.
Result<Profile> parse_seccomp_profile(std::string_view json_text);

/// Compiles a profile into the raw BPF program (the bytes of an array of struct
/// sock_filter) for the native architecture. no_new_privs is left to the loader.
/// Errors: "seccomp" with the errno libseccomp gave and the failing rule in the message;
/// nothing is returned for a profile that does not compile whole.
Result<std::string> compile_seccomp(const Profile& profile);

/// The path of the compiled filter for `profile_json` under `run_dir`:
/// <run_dir>/seccomp/<sha256>.bpf, the digest covering the profile text, the native
/// architecture and libseccomp's version. Parses, compiles and writes it (atomically;
/// the directory made with mode 0700) only when it is absent; concurrent callers are
/// safe. Errors: those of parse_seccomp_profile and compile_seccomp, and io errors.
Result<std::string> cached_seccomp_filter(const std::string& run_dir, std::string_view profile_json);

/// As above, for a profile that `make_profile` makes, called only when no filter is
/// cached under `key` (the digest covers `key` in place of the profile text): `key` must
/// name everything the profile is made of, and differ from any profile's own text.
/// Errors: those of make_profile, and as above.
Result<std::string> cached_seccomp_filter(const std::string& run_dir, std::string_view key,
                                          const std::function<Result<std::string>()>& make_profile);

/// Reads a compiled filter. Errors: those of reading the file, and "corrupt" when its
/// size is zero, not a multiple of sizeof(struct sock_filter) or above BPF_MAXINSNS
/// instructions.
Result<std::string> read_seccomp_filter(const std::string& path);

/// (mask, value) pairs whose union is exactly the set of x with (x & mask) not in
/// { v & mask : v in values }: how a not_in condition becomes masked_eq rules. Bits
/// outside `mask` are free in every pair.
std::vector<std::pair<uint64_t, uint64_t>> not_in_cover(uint64_t mask, std::span<const uint64_t> values);

}  // namespace dsec::guard
