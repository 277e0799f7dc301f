// The names of a sandbox's egress rules in its /etc/hosts: a file the host owns (in the
// sandbox's state directory) bound read-only over the sandbox's /etc/hosts, so that the
// agent finds each allowed name without any DNS egress, and nothing inside can change
// the file the host writes or make the host write elsewhere. What the agent could write
// there would not matter anyway: the egress programs allow addresses, not names.
#pragma once

#include <string>
#include <string_view>

#include "dsec/guard/egress_rules.h"
#include "dsec/sys/error.h"

namespace dsec::guard {

/// The line that starts dsec's block; everything from it to the end is dsec's.
inline constexpr std::string_view kHostsMarker = "# dsec-guard: the policy's names, resolved on the host";

/// The text of the sandbox's /etc/hosts: `base` (the image's file, or an earlier text
/// of this function) without dsec's block and without the names of `resolved` on its
/// own lines (a line left with no name goes), then the block: the marker with `when`,
/// and one "ADDRESS NAME" line per address.
std::string hosts_text(std::string_view base, const Resolved& resolved, const std::string& when);

/// Binds `host_file` read-only (and nosuid, nodev, noexec) over /etc/hosts in the mount
/// namespace of the sandbox whose init is `init_pid` (started at `init_start`), as host
/// root. The sandbox's /etc/hosts must be a regular file (a link, there or as /etc, is
/// not followed but refused); an image without one gets an empty file owned by root
/// inside (and /etc likewise), which the bind then covers. Errors: not_running, the
/// sandbox's id maps, open_tree or mount_setattr on the host file, and the failing step
/// inside (open /etc, making /etc or /etc/hosts, statx, move_mount).
Status bind_hosts(int init_pid, unsigned long long init_start, const std::string& host_file);

}  // namespace dsec::guard
