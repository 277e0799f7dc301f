// Which cgroup layout the host has: v2 (unified only), v1 (controllers in their own
// hierarchies) or hybrid (v1 controllers plus a v2 tree that holds no controllers).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "dsec/sys/error.h"

namespace dsec::cgroup {

enum class Mode { v1, v2, hybrid };

/// Where the hierarchies are mounted.
struct Layout {
    Mode mode = Mode::v2;
    std::string unified;                         // cgroup2 mount point ("" when none)
    std::map<std::string, std::string> v1;       // controller -> mount point of its hierarchy
    /// Hybrid only: every group of the unified tree freezes, kills and counts its CPU time
    /// itself (cgroup.freeze, cgroup.kill, cpu.stat: kernel 5.14 and later), so dsec makes
    /// no group in the v1 freezer and cpuacct hierarchies. Each group costs the kernel a
    /// few KiB per sandbox and a cgroup.procs write per process that enters it.
    bool unified_core = false;

    /// True when `controller` is handled by a v1 hierarchy dsec makes groups in (else by
    /// the unified tree).
    bool on_v1(const std::string& controller) const {
        return v1.count(controller) != 0 && !(unified_core && (controller == "freezer" || controller == "cpuacct"));
    }
};

/// Parses /proc/self/mountinfo text. Controllers mounted on v1 win over the unified tree
/// (that is what the kernel does: a controller lives in one hierarchy at a time).
/// Errors: not_found when no cgroup filesystem is mounted at all.
Result<Layout> parse_mountinfo(std::string_view mountinfo);

/// Parses /proc/self/mounts text ("source mountpoint fstype options 0 0") into the same
/// layout. Errors: not_found when no cgroup filesystem is mounted at all.
Result<Layout> parse_mounts(std::string_view mounts);

/// What a hierarchy's usual mount point is: its filesystem type, as statfs says.
enum class Mounted { none, cgroup1, cgroup2, other };

/// What is mounted at `path`: none when it cannot be read, other when it is not the root of
/// a mount or not a cgroup filesystem.
Mounted mounted_at(const std::string& path);

/// The layout from /proc/self/cgroup text ("id:controllers:path" per hierarchy, "0::path"
/// for the unified tree once it has been mounted) when every hierarchy dsec uses is
/// mounted where systemd puts it: the unified tree on /sys/fs/cgroup or
/// /sys/fs/cgroup/unified, a v1 hierarchy on /sys/fs/cgroup/<its controllers>, as
/// `mounted` says of each path. nullopt when one is not (detect then reads the mounts).
/// The same layout as parse_mounts gives there, from a dozen short lines instead of one
/// line per mount of the namespace (each layer dsec-mount mounted among them).
std::optional<Layout> parse_usual(std::string_view proc_cgroup, const std::function<Mounted(const std::string&)>& mounted);

/// Finds the layout once and caches it for the process's lifetime (parse_usual, else
/// /proc/self/mounts); sets unified_core on a hybrid host whose kernel is 5.14 or later.
Result<Layout> detect();

/// Whether a kernel release ("6.1.0-13-amd64") is at least major.minor.
bool kernel_at_least(std::string_view release, int major, int minor);

/// "v1", "v2" or "hybrid".
const char* mode_name(Mode m);

}  // namespace dsec::cgroup
