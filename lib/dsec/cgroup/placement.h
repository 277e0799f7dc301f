// Where a sandbox's cgroup directories go, for each host layout and memory-cgroup mode.
//
// own (the default): `<parent>/<id>` in every hierarchy; the sandbox has a memory cgroup
// of its own, with its own limit and figures.
// shared: the sandboxes of one run directory share one memory cgroup, `<parent>/.shared-memory`
// (a name no sandbox id can take: ids never start with '.'). Every memory cgroup costs the
// kernel bookkeeping sized by the shrinkers alive on the host, so dense idle fleets share one.
//   v1, hybrid: the v1 memory hierarchy holds `<parent>/.shared-memory` and no group per
//     sandbox; pids, cpu, cpuacct, freezer (and the unified tree) stay `<parent>/<id>`.
//     (On a hybrid host with Layout::unified_core, no cpuacct or freezer group at all.)
//   v2: the sandbox's group nests as `<parent>/.shared-memory/<id>`; the shared group
//     enables cpu and pids for its children but not memory, so their pages are charged to
//     the shared group.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dsec/cgroup/detect.h"
#include "dsec/sys/error.h"

namespace dsec::cgroup {

/// Whether a sandbox has a memory cgroup of its own or shares its run directory's.
enum class Memcg { own, shared };

/// The name of the shared memory cgroup under a run directory's parent group.
inline constexpr std::string_view kSharedMemoryGroup = ".shared-memory";

/// "own" or "shared".
const char* memcg_name(Memcg m);

/// The mode named `name`. Errors: usage naming the choices.
Result<Memcg> parse_memcg(std::string_view name);

/// The directories of one sandbox's cgroup.
struct Placement {
    std::vector<std::string> dirs;  // the sandbox's own groups, one per hierarchy it has a group in
    std::string unified;            // its group in the unified tree ("" without one)
    std::string memory;             // the memory cgroup its processes are charged to ("" when none)
    std::string shared;             // the shared memory group ("" with Memcg::own)
    std::vector<std::string> join;  // the groups a process enters: dirs, plus the shared one on v1
    std::vector<std::string> unused;  // its groups in v1 hierarchies dsec no longer uses (Layout::unified_core): made by
                                      // an older dsec, removed with the others
};

/// The placement of sandbox `id` under `parent` (parent_for_run()). Errors: unsupported
/// for Memcg::shared where the v1 memory controller shares its hierarchy with another
/// controller dsec uses (the memory group could not differ from the others).
Result<Placement> place(const Layout& layout, const std::string& parent, const std::string& id, Memcg memcg);

}  // namespace dsec::cgroup
