// Starting a sandbox's init in its (existing) cgroup over a fresh upper: the step create
// ends with and reset repeats.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dsec/cgroup/cgroup.h"
#include "dsec/mount/rootfs.h"
#include "dsec/ns/idrange.h"
#include "dsec/ns/spawn.h"
#include "dsec/sandbox/bind.h"
#include "dsec/sandbox/cpu_class.h"
#include "dsec/sandbox/security.h"

namespace dsec::sandbox {

/// What the init of sandbox `id` is started with.
struct StartSpec {
    std::string id;
    std::string hostname;
    std::string init_program;  // path of dsec-init
    Security security;         // its seccomp program installed already (install_seccomp)
    ns::IdRange ids;           // the host ids claimed for it (userns only)
    uint64_t disk = 0;         // cap on the upper (0: the rootfs's upper directory)
    uint64_t tmp_size = 0;     // bytes of the scratch tmpfs
    CpuClass cpu_class = CpuClass::latency;
    std::vector<Bind> binds;                  // --bind, opened afresh at each start
    std::vector<std::string> bind_forbidden;  // host directories a bind source may not overlap
    std::string exec_socket;                  // in the state directory, where the init serves execs
                                              // (served.h); empty: Paths::exec_socket_name()
    bool init_in_process = false;             // no dsec-init to execute (CreateOptions::init_in_process)
    std::function<void()> while_starting;     // ns::InitSpec::while_starting
    const cgroup::Limits* limits = nullptr;   // create's: the cgroup's late part (Cgroup::Part) is made
                                              // with these while the init sets itself up; none: it exists
};

/// Starts the init over `rootfs` (with --disk, on a fresh tmpfs upper) straight into
/// the cgroup `cg` (its early part at least: StartSpec::limits), and waits until it
/// reports ready.
/// Errors: the failing confinement, mount, open or clone step (see ns::start_init).
Result<ns::Started> start(const Paths& paths, const mount::Rootfs& rootfs, const StartSpec& s,
                          const cgroup::Cgroup& cg);

}  // namespace dsec::sandbox
