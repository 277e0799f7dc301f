// The covers of hidden paths: one small read-only tmpfs per host, mounted at
// <run>/guard, holding an empty directory "d" and an empty file "f". Each hidden path
// gets a clone of one of them, so that hiding paths adds no superblock per sandbox
// (every superblock costs each memory cgroup on the host shrinker bookkeeping).
#pragma once

#include <string>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::guard {

/// Where the covers are mounted under a run directory.
std::string covers_dir(const std::string& run_dir);

/// An O_PATH descriptor of the covers' mount, mounting it first if it is not there
/// (under the lock <run>/locks/guard.lock; built detached and attached in one step, so
/// a kill leaves either the whole mount or none). Errors: the failing mount step, io.
Result<Fd> open_covers(const std::string& run_dir);

/// A detached clone of the empty directory (`dir`) or file, read-only, to attach over a
/// hidden path (in any mount namespace). Errors: open_tree.
Result<Fd> clone_cover(int covers, bool dir);

}  // namespace dsec::guard
