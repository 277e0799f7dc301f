// A per-task policy: one JSON document saying what a sandbox may see and reach, on top
// of the baseline every sandbox has. Parsed and checked whole here; nothing is applied
// from a document that does not parse (dsec-guard(1) holds the schema).
//
//   {"about": "text",
//    "files":    {"read_only": [PATH...], "read_write": [PATH...], "hidden": [PATH...]},
//    "syscalls": {"allow": [NAME...], "deny": [NAME...]},
//    "network":  {"allow": [{"cidr": "10.0.0.0/8", "ports": [443, "8000-8100"], "protocol": "tcp"},
//                           {"domain": "mirror.example", "ports": [443]}]},
//    "limits":   {"memory": "1G", "cpus": 1.5, "pids": 256, "disk": "2G", "nofile": 1024},
//    "scrub":    [PATH...]}
//
// Every key is optional; an unknown key is an error (a typo must not drop a rule).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::guard {

/// Paths inside the sandbox (absolute, normalised).
struct FileRules {
    std::vector<std::string> read_only;   // bound read-only onto themselves
    std::vector<std::string> read_write;  // writable again beneath a read-only path
    std::vector<std::string> hidden;      // an empty read-only file or directory over them
    bool empty() const { return read_only.empty() && read_write.empty() && hidden.empty(); }
};

/// Changes to the base seccomp profile, by syscall name.
struct SyscallRules {
    std::vector<std::string> allow;  // taken out of the base profile's refusals
    std::vector<std::string> deny;   // refused with EPERM
    bool empty() const { return allow.empty() && deny.empty(); }
};

/// A closed set, one name table in policy_net.cc.
enum class Protocol { any, tcp, udp };

/// One allowed egress destination: an address range or a domain name, with ports.
struct Destination {
    std::string domain;                  // set: a name resolved on the host; else a range
    int family = 0;                      // AF_INET or AF_INET6 (ranges only)
    std::array<uint8_t, 16> addr{};      // network address, host bits zero
    unsigned prefix = 0;                 // prefix length
    std::vector<std::pair<uint16_t, uint16_t>> ports;  // inclusive ranges; empty: every port
    Protocol protocol = Protocol::any;
};

/// Egress: denied unless a destination allows it.
struct NetworkRules {
    std::vector<Destination> allow;
    bool empty() const { return allow.empty(); }
};

/// Limits a policy lowers (0: no change).
/// Fewest tasks a sandbox can run anything with (--pids, limits.pids): its init and one
/// more (the child making its network namespace while it starts, which a v2 host counts;
/// later each command).
constexpr uint64_t kMinPids = 2;

struct PolicyLimits {
    uint64_t memory = 0;  // bytes
    double cpus = 0;
    uint64_t pids = 0;
    uint64_t disk = 0;    // bytes
    uint64_t nofile = 0;  // open files (soft and hard)
};

/// A parsed and checked policy.
struct Policy {
    std::string about;
    FileRules files;
    SyscallRules syscalls;
    NetworkRules network;
    PolicyLimits limits;
    std::vector<std::string> scrub;  // paths removed before a snapshot is packed
    std::string digest;              // sha256 of the document's text
};

/// Syscalls no policy may allow: they would undo the policy's own file and network
/// rules (new mounts, file handles, BPF) or belong to the host (modules, kexec).
std::span<const std::string_view> never_allowed_syscalls();

/// Parses and checks a policy document. Errors: bad_input, the message starting with
/// the field at fault ("files.hidden[1]: not an absolute path").
Result<Policy> parse_policy(std::string_view json_text);

/// Reads and parses a policy file. Errors: those of reading (with the path), and of
/// parse_policy with the path attached.
Result<Policy> load_policy(const std::string& path);

/// What a policy compiles to, normalised: {"files", "syscalls", "network", "limits",
/// "scrub", "digest"}; sizes in bytes, destinations as {"cidr"|"domain", "ports",
/// "protocol"}.
nlohmann::json policy_record(const Policy& policy);

/// The seccomp profile (JSON text, format of seccomp.h) of `base_profile` changed by
/// `rules`: allowed names taken out of every rule that refuses them, denied names
/// refused with EPERM by one rule of their own. Errors: bad_input when the base is not
/// a profile, or a name is never_allowed.
Result<std::string> seccomp_profile_with(std::string_view base_profile, const SyscallRules& rules);

/// The JSON object of one destination, as policy_record() writes it.
nlohmann::json destination_record(const Destination& d);

/// The record `dsec-guard check` prints: {"type":"policy","v":1,"path"} with
/// policy_record() and "seccomp": {"base":"default","instructions":N,
/// "allowed_already":[...]}, the policy's syscall rules compiled over the default
/// profile and the allowed names it never refused. Errors: those of compiling.
Result<nlohmann::json> check_record(const Policy& policy, const std::string& path);

/// Parses a "network" object. Errors: bad_input naming the field.
Result<NetworkRules> parse_network(const nlohmann::json& j);

}  // namespace dsec::guard
