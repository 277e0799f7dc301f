// What every process of a sandbox is held to, beyond its namespaces: the user namespace
// choice, capabilities, resource limits and the seccomp program, recorded in the state
// at create and turned into a dsec_confinement at every door (init, exec, cp).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "dsec/guard/policy.h"
#include "dsec/ns/confinement.h"
#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// The baseline as asked for at create.
struct Security {
    bool userns = true;                   // false: --userns=host (unsafe, explicit)
    uint64_t caps = ns::default_caps();   // kept by root inside
    ns::Rlimits rlimits;
    std::string seccomp = "default";      // "default", "unconfined" or a profile file
};

/// The `security` object of the state: {"userns", "caps", "rlimits", "seccomp"}.
json security_record(const Security& s);

/// Back from the state. Errors: bad_input naming the field.
Result<Security> security_from_state(const json& state);

/// Compiles (or finds in the cache under the run directory) the sandbox's seccomp
/// program, changed by a policy's `rules` when given, and links it into its state
/// directory as seccomp.bpf; nothing for "unconfined". Errors: the profile's error
/// (bad_input, not_found), io.
Status install_seccomp(const Paths& paths, const std::string& id, const std::string& choice,
                       const guard::SyscallRules* rules = nullptr);

/// Confinement for a process entering sandbox `id`: `uid`/`gid` inside (-1: stay root),
/// the sandbox's capabilities, limits and seccomp program.
/// Errors: corrupt (a damaged seccomp.bpf), bad_input.
Result<std::unique_ptr<dsec_confinement>> confinement_for(const Paths& paths, const std::string& id,
                                                          const Security& s, int64_t uid, int64_t gid);

}  // namespace dsec::sandbox
