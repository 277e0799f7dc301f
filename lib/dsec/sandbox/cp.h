// Copying files into and out of a sandbox as tar streams: one side writes a tar of the
// source (symlinks stored, never followed), the other extracts it with libarchive's
// safety checks (no "..", no absolute paths, no writing through symlinks). The sandbox's
// side runs in a child that has joined the sandbox's mount namespace and cgroups, so
// paths resolve inside the sandbox's root and its writes are charged to it.
#pragma once

#include <string>

#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// Counts of what was copied.
struct CopyStats {
    uint64_t entries = 0;
    uint64_t bytes = 0;
};

/// Host `src` (file or directory) to `dst` inside sandbox `id`. As with cp -a: when
/// `dst` is an existing directory the source lands inside it under its own name, else
/// it is created as `dst`. Modes, owners and times are kept. Errors: not_found, the
/// failing archive step with its message.
Result<CopyStats> copy_in(const Paths& paths, const std::string& id, const std::string& src, const std::string& dst);

/// `src` inside sandbox `id` to host `dst` (same rules). The sandbox's symlinks are
/// copied as symlinks and never followed on the host.
Result<CopyStats> copy_out(const Paths& paths, const std::string& id, const std::string& src, const std::string& dst);

}  // namespace dsec::sandbox
