// The cap on what a sandbox may write (--disk).
//
// Choice: with --disk, the overlay's upper and work live on a tmpfs of that size instead
// of the rootfs's upper on local disk. The tmpfs is made detached (fsopen/fsmount) on the
// host and is referenced only by the sandbox's overlay, so it is in no mount table and
// vanishes with the sandbox. Writes past the size fail with ENOSPC inside the sandbox.
// Its pages are memory (charged to the sandbox's memory cgroup), which suits the
// short-lived, small uppers of agent sandboxes; project quotas would need a filesystem
// set up for them on every host.
#pragma once

#include <cstdint>
#include <string>

#include "dsec/mount/rootfs.h"
#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::sandbox {

/// Where the overlay's upper/ and work/ are: a directory holding both, or (when capped)
/// a detached tmpfs holding both.
struct Upper {
    std::string dir;
    Fd tmpfs;  // keeps the detached tmpfs alive until the overlay holds it
};

/// The rootfs's own upper/work (which must be DIR/upper and DIR/work) when `disk` is 0,
/// else fresh ones on a detached tmpfs of `disk` bytes. Errors: not_found (missing
/// upper), bad_input (upper and work not side by side), the failing mount call.
Result<Upper> prepare_upper(const mount::Rootfs& rootfs, uint64_t disk);

/// The size of a one-shot sandbox's in-memory upper when no --disk is given: half the
/// host's RAM, as tmpfs itself defaults to (its pages are charged to the sandbox's
/// memory cgroup, so --memory bounds it too).
uint64_t default_memory_upper_size();

}  // namespace dsec::sandbox
