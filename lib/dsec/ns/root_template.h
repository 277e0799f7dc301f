// The mount namespace a run directory's sandboxes are copied from.
//
// A sandbox's init is cloned with CLONE_NEWNS, so its mount namespace starts as a copy of
// its parent's. Copied from the host's, the init must then pivot_root into its overlay
// and detach the host's tree; but every pivot_root walks every thread on the host
// (chroot_fs_refs, under tasklist_lock) to move roots that pointed at the old one, and
// each idle sandbox is a thread: at 10,000 alive that walk was 3.7 ms of each create
// (docs/bench/density-10000.md). Copied instead from this template, whose root is a small
// read-only tmpfs holding nothing of the host, the init only chroots into its overlay:
// what lies outside its root is that tmpfs, the template's /dev nodes and an empty proc.
//
// The template's root holds
//   /dev    a read-only tmpfs holding null, zero, full, random, urandom and tty, made as the
//           host's nodes are (the init binds them on)
//   /proc   a proc of an empty pid namespace: the kernel lets a user namespace mount a new
//           proc only where one is already fully visible (mount_too_revealing)
//   /r      an empty directory: the init's start directory (its binds' stage, bind_stage.h)
// and is kept alive by a bind of its nsfs file at RUN/rootns, made once per run directory
// (under RUN/rootns.lock); the one pivot_root it takes is paid then.
#pragma once

#include <string>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::ns {

/// The start directory of an init copied from the template.
inline constexpr const char* kTemplateStartDir = "/r";

/// The run directory's template mount namespace (an nsfs descriptor), made on first use.
/// A failure to make it is remembered in RUN/rootns.unusable (its reason), and later
/// calls fail at once while that file is there (remove it to try again).
/// Errors: the failing step making it, unsupported after one (callers fall back to the
/// host's namespace and pivot_root).
Result<Fd> root_template(const std::string& run_dir);

}  // namespace dsec::ns
