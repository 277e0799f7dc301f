#include "dsec/cgroup/detect.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <vector>

#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"

namespace dsec::cgroup {

namespace {
// The controllers dsec uses on a v1 hierarchy; named hierarchies (name=systemd) and the
// others (blkio, devices, ...) are left alone.
constexpr const char* kControllers[] = {"memory", "cpu", "cpuacct", "pids", "freezer"};

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t pos = s.find(sep, start);
        out.emplace_back(s.substr(start, pos - start));
        if (pos == std::string_view::npos) return out;
        start = pos + 1;
    }
}

// mountinfo escapes spaces and the like as \040.
std::string unescape(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            out += char((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out += s[i];
        }
    }
    return out;
}
}  // namespace

const char* mode_name(Mode m) {
    switch (m) {
        case Mode::v1: return "v1";
        case Mode::v2: return "v2";
        case Mode::hybrid: return "hybrid";
    }
    return "?";
}

namespace {
// Notes one mount in `layout` when it is a cgroup hierarchy; `any` when it is.
void add_mount(Layout& layout, bool& any, const std::string& fstype, const std::string& mountpoint,
               const std::string& options) {
    if (fstype == "cgroup2") {
        if (layout.unified.empty()) layout.unified = mountpoint;
        any = true;
    } else if (fstype == "cgroup") {
        any = true;
        for (auto& opt : split(options, ','))
            for (const char* c : kControllers)
                if (opt == c && !layout.v1.count(opt)) layout.v1[opt] = mountpoint;
    }
}

// Calls `f` with each line of `text`.
template <class F>
void each_line(std::string_view text, F f) {
    std::istringstream in{std::string(text)};
    std::string line;
    while (std::getline(in, line)) f(line);
}

Result<Layout> finish(Layout layout, bool any, const char* source) {
    if (!any) return fail(make_error(Code::not_found, "no cgroup filesystem is mounted", source));
    if (layout.v1.empty()) layout.mode = Mode::v2;
    else layout.mode = layout.unified.empty() ? Mode::v1 : Mode::hybrid;
    return layout;
}
}  // namespace

Result<Layout> parse_mountinfo(std::string_view mountinfo) {
    Layout layout;
    bool any = false;
    each_line(mountinfo, [&](const std::string& line) {
        // "id parent maj:min root mountpoint opts [optional...] - fstype source superopts"
        auto dash = line.find(" - ");
        if (dash == std::string::npos) return;
        auto left = split(std::string_view(line).substr(0, dash), ' ');
        auto right = split(std::string_view(line).substr(dash + 3), ' ');
        if (left.size() >= 5 && right.size() >= 3) add_mount(layout, any, right[0], unescape(left[4]), right[2]);
    });
    return finish(std::move(layout), any, "/proc/self/mountinfo");
}

Result<Layout> parse_mounts(std::string_view mounts) {
    Layout layout;
    bool any = false;
    each_line(mounts, [&](const std::string& line) {
        // "source mountpoint fstype options dump pass"; a cgroup's options end with its
        // controllers, as mountinfo's super options do.
        auto f = split(line, ' ');
        if (f.size() >= 4) add_mount(layout, any, f[2], unescape(f[1]), f[3]);
    });
    return finish(std::move(layout), any, "/proc/self/mounts");
}

Mounted mounted_at(const std::string& path) {
    // The root of a mount, not a directory in one (a cgroup's own directory has the same
    // filesystem type), and not a symlink to one (systemd links cpu to cpu,cpuacct: the
    // mounts name the directory).
    Fd dir(::open(path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct statx sx;
    struct statfs sf;
    if (!dir || ::statx(dir.get(), "", AT_EMPTY_PATH, 0, &sx) < 0 || ::fstatfs(dir.get(), &sf) < 0)
        return Mounted::none;
    if (!(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) || !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
        return Mounted::other;
    if (sf.f_type == CGROUP2_SUPER_MAGIC) return Mounted::cgroup2;
    return sf.f_type == CGROUP_SUPER_MAGIC ? Mounted::cgroup1 : Mounted::other;
}

std::optional<Layout> parse_usual(std::string_view proc_cgroup, const std::function<Mounted(const std::string&)>& mounted) {
    Layout layout;
    bool ok = true, unified_seen = false;
    each_line(proc_cgroup, [&](const std::string& line) {
        auto first = line.find(':'), second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) {
            ok = false;
            return;
        }
        std::string id = line.substr(0, first), controllers = line.substr(first + 1, second - first - 1);
        if (id == "0" && controllers.empty()) {
            unified_seen = true;
            return;
        }
        std::vector<std::string> ours;
        for (auto& c : split(controllers, ','))
            for (const char* want : kControllers)
                if (c == want) ours.push_back(c);
        if (ours.empty()) return;  // name=systemd, blkio, ...: not ours
        std::string at = "/sys/fs/cgroup/" + controllers;
        if (mounted(at) != Mounted::cgroup1) {
            ok = false;
            return;
        }
        for (auto& c : ours) layout.v1[c] = at;
    });
    if (!ok) return std::nullopt;
    if (unified_seen) {
        // Mounted once at least, and perhaps not now or elsewhere: only the usual places.
        if (mounted("/sys/fs/cgroup") == Mounted::cgroup2) layout.unified = "/sys/fs/cgroup";
        else if (mounted("/sys/fs/cgroup/unified") == Mounted::cgroup2) layout.unified = "/sys/fs/cgroup/unified";
        else return std::nullopt;
    }
    if (layout.unified.empty() && layout.v1.empty()) return std::nullopt;
    return finish(std::move(layout), true, "/proc/self/cgroup").value();
}

bool kernel_at_least(std::string_view release, int major, int minor) {
    std::string r(release);
    char* end = nullptr;
    long got_major = std::strtol(r.c_str(), &end, 10);
    long got_minor = (end && *end == '.') ? std::strtol(end + 1, nullptr, 10) : 0;
    return got_major > major || (got_major == major && got_minor >= minor);
}

Result<Layout> detect() {
    static std::once_flag once;
    static Result<Layout> cached = fail(make_error(Code::internal, "cgroup layout not read"));
    std::call_once(once, [] {
        // This runs at every exec, create and one-shot. /proc/self/cgroup first, a few
        // lines; then /proc/self/mounts, not mountinfo: the same hierarchies and
        // controllers, cheaper for the kernel to produce (mountinfo resolves each cgroup
        // mount's root path).
        if (auto own = fs::read_file("/proc/self/cgroup")) {
            auto usual = parse_usual(*own, mounted_at);
            if (usual) cached = std::move(*usual);
        }
        if (!cached) {
            auto text = fs::read_file("/proc/self/mounts");
            cached = text ? parse_mounts(*text) : Result<Layout>(fail(text.error()));
        }
        struct utsname u;
        if (cached && cached->mode == Mode::hybrid && ::uname(&u) == 0)
            cached->unified_core = kernel_at_least(u.release, 5, 14);
    });
    return cached;
}

}  // namespace dsec::cgroup
