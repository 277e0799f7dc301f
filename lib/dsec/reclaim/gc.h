// dsec-reclaim gc: what killed or crashed runs left behind, found and removed.
//
// The ownership rule, which lets gc run at any time, even during a batch create:
//  - A sandbox's lock ($DSEC_RUN/sandboxes/<id>/lock) is held by create for the whole
//    create and by destroy for the whole teardown. gc only takes it without waiting: a
//    held lock is someone's work in progress and is left alone. A sandbox whose lock is
//    free and whose state says "creating" or "destroying" lost its creator or destroyer.
//  - A state directory without a state file (create made the directory and not yet the
//    file) and an upper directory without a state directory (dsec-mount made it; its
//    rootfs record may still be on its way to `dsec-run create`) belong to someone until
//    they are older than the grace period.
//  - A layer mount is released only when no sandbox state names it, no upper directory
//    is still within its grace period (its rootfs record names layers gc cannot see) and
//    the mount itself is older than the grace period.
//  - Cgroups, id ranges: create makes the state directory before either, and destroy
//    removes them before the state directory; one whose sandbox has no state directory is
//    an orphan. The run directory's shared memory group (create --memcg shared) is no
//    sandbox's: it goes once no process or sandbox group is left in it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dsec/reclaim/report.h"
#include "dsec/sandbox/state.h"
#include "dsec/sys/paths.h"

namespace dsec::reclaim {

/// What a gc pass may do.
struct GcOptions {
    bool dry_run = false;   // report, remove nothing
    int64_t grace_s = 900;  // see above
};

/// What gc makes of one sandbox whose lock it holds.
enum class Verdict { keep, young, dead_init, half_created, half_destroyed, broken };
/// "keep", "young", "dead_init", "half_created", "half_destroyed", "broken".
const char* verdict_name(Verdict v);

/// Judges a sandbox: `state` the lifecycle its state file records (nullopt: none, or
/// unparsable when `unparsable`), `init_alive` whether its init runs (not a zombie),
/// `age` of its directory in seconds. Pure: no system access.
Verdict judge(std::optional<sandbox::Lifecycle> state, bool unparsable, bool init_alive, int64_t age,
              int64_t grace_s);

/// One pass over the sandboxes of `paths` (--root, --run) and the layer store: dead and
/// half-made sandboxes destroyed, orphaned cgroups (and what still runs in them), the
/// empty cgroup parent, id ranges, uppers, unused layer mounts and the temp files of
/// interrupted layer builds removed; one {"type":"event","event":"gc","kind",...} per
/// item. A failing item is reported and the pass goes on. Errors: only when `report`
/// cannot emit (stdout closed) or the run directory cannot be read.
Status collect_garbage(const dsec::Paths& paths, const GcOptions& options, const Report& report);

}  // namespace dsec::reclaim
