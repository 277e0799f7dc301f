#include "dsec/cgroup/detect.h"

#include <sys/utsname.h>

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <vector>

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
        // /proc/self/mounts, not mountinfo: the same hierarchies and controllers, cheaper
        // for the kernel to produce (mountinfo resolves each cgroup mount's root path);
        // this runs at every exec, create and one-shot.
        auto text = fs::read_file("/proc/self/mounts");
        cached = text ? parse_mounts(*text) : Result<Layout>(fail(text.error()));
        struct utsname u;
        if (cached && cached->mode == Mode::hybrid && ::uname(&u) == 0)
            cached->unified_core = kernel_at_least(u.release, 5, 14);
    });
    return cached;
}

}  // namespace dsec::cgroup
