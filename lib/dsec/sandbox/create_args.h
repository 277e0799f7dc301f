// dsec-run create's options as typed on its command line (and run's, which takes the
// same), checked and turned into CreateOptions.
#pragma once

#include <string>
#include <vector>

#include "dsec/sandbox/sandbox.h"
#include "dsec/sys/error.h"

namespace dsec::sandbox {

/// The create options as typed; validated by to_options().
struct CreateArgs {
    std::string id, hostname, memory, cpus, pids, disk, workdir, user, network = "none", ttl, idle_ttl, policy;
    std::string userns = "private", seccomp = "default", tmp_size, cpu_class = "latency", memcg = "own";
    std::vector<std::string> env, labels, layers, cap_add, cap_drop, ulimits, binds;
    bool verify = false;
    /// The options, with dsec-init found beside the running program. Errors: usage for
    /// an invalid value (exit 2), not_found when dsec-init is missing, a --policy's own.
    Result<CreateOptions> to_options() const;
};

}  // namespace dsec::sandbox
