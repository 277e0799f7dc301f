// The C++ side of the confinement step (confine.h): capability names and defaults, the
// default resource limits, building a dsec_confinement, and turning a child's report
// into an Error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dsec/ns/confine.h"
#include "dsec/sys/error.h"

namespace dsec::ns {

/// The capabilities root inside a sandbox keeps: podman's default list (CHOWN,
/// DAC_OVERRIDE, FOWNER, FSETID, KILL, NET_BIND_SERVICE, SETFCAP, SETGID, SETPCAP,
/// SETUID, SYS_CHROOT), all of them meaningful only inside the sandbox's user namespace.
uint64_t default_caps();

/// `base` with the named capabilities added and then removed ("NET_RAW", "cap_net_raw",
/// "ALL"). Errors: usage naming an unknown capability.
Result<uint64_t> change_caps(uint64_t base, const std::vector<std::string>& add, const std::vector<std::string>& drop);

/// Names of the capabilities in `caps` ("CHOWN", ...), lowest bit first.
std::vector<std::string> cap_names(uint64_t caps);

/// The set back from names (as cap_names gives them). Errors: bad_input.
Result<uint64_t> caps_from_names(const std::vector<std::string>& names);

/// Resource limits every process of a sandbox gets unless told otherwise: no core files
/// (a core of a host-range process would land in the host's core_pattern), 1024 open
/// files (up to 524,288 for whoever raises the soft limit), file size unlimited.
struct Rlimits {
    uint64_t nofile_soft = 1024, nofile_hard = 524288;
    uint64_t core = 0;
    uint64_t fsize = RLIM_INFINITY;  // bytes; the --disk cap bounds writes in the upper
};

/// A confinement record, ready for dsec_confine(). `uid`/`gid` -1 keep the caller's;
/// `seccomp` is a compiled BPF program (empty: none). Errors: bad_input when the program
/// does not fit.
Result<std::unique_ptr<dsec_confinement>> make_confinement(int64_t uid, int64_t gid, uint64_t caps,
                                                          const Rlimits& limits, std::string_view seccomp);

/// Reads one dsec_report from `fd` (waiting for it). Returns the report's value on
/// success. Errors: the step the child reported (op, path, errno) with `what` as
/// context, or io ("... exited before it reported") when nothing arrived.
Result<int> read_report(int fd, const std::string& what);

}  // namespace dsec::ns
