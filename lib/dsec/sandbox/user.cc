#include "dsec/sandbox/user.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <optional>

#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"

namespace dsec::sandbox {

namespace {
constexpr off_t kMaxFile = off_t(4) << 20;

std::optional<unsigned> number(std::string_view s) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

// One id, by number or by name from the file at `path` (its field 3; `gid` gets field 4).
Result<Entry> lookup(const std::string& text, const std::string& part, int init_pid, const char* path) {
    if (auto n = number(part)) return Entry{*n, *n};
    auto file = read_inside(init_pid, path);
    if (!file) return fail(std::move(file.error()).context("looking up \"" + part + "\" for --user " + text));
    auto e = find_entry(*file, part);
    if (!e) return fail(make_error(Code::usage, "no \"" + part + "\" in the sandbox's " + path + " (--user " + text + ")"));
    return *e;
}
}  // namespace

Result<std::string> read_inside(int init_pid, const char* path) {
    std::string root = "/proc/" + std::to_string(init_pid) + "/root";
    Fd dir(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return fail(sys_error("open", root));
    struct open_how how = {};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    Fd at(int(::syscall(SYS_openat2, dir.get(), path, &how, sizeof how)));
    if (!at) return fail(sys_error("open", path));
    struct stat st;
    if (::fstat(at.get(), &st) < 0) return fail(sys_error("fstat", path));
    if (!S_ISREG(st.st_mode) || st.st_size > kMaxFile)
        return fail(make_error(Code::bad_input, "not a regular file of at most 4 MiB in the sandbox", path));
    std::string self = "/proc/self/fd/" + std::to_string(at.get());
    Fd f(::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!f) return fail(sys_error("open", path));
    std::string text;
    char buf[65536];
    for (ssize_t n; (n = ::read(f.get(), buf, sizeof buf)) != 0;) {
        if (n < 0) return fail(sys_error("read", path));
        text.append(buf, size_t(n));
        if (text.size() > size_t(kMaxFile)) return fail(make_error(Code::bad_input, "grew past 4 MiB while read", path));
    }
    return text;
}

std::optional<Entry> find_entry(const std::string& text, const std::string& name) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        std::string_view line(text.data() + pos, (end == std::string::npos ? text.size() : end) - pos);
        pos = end == std::string::npos ? text.size() : end + 1;
        std::string_view fields[4];
        size_t at = 0, i = 0;
        for (; i < 4; i++) {
            size_t colon = line.find(':', at);
            fields[i] = line.substr(at, colon == std::string_view::npos ? std::string_view::npos : colon - at);
            if (colon == std::string_view::npos) break;
            at = colon + 1;
        }
        if (i < 2 || fields[0] != name) continue;
        auto id = number(fields[2]);
        if (!id) continue;
        auto gid = i >= 3 ? number(fields[3]) : std::nullopt;
        return Entry{*id, gid.value_or(*id)};
    }
    return std::nullopt;
}

Result<parse::User> resolve_user(const std::string& text, int init_pid) {
    if (parse::is_numeric_user(text)) return parse::parse_user(text);
    if (auto r = parse::check_user(text); !r) return fail(r.error());
    auto colon = text.find(':');
    auto who = lookup(text, text.substr(0, colon), init_pid, "/etc/passwd");
    if (!who) return fail(who.error());
    parse::User u{who->id, who->gid};
    if (colon != std::string::npos) {
        auto group = lookup(text, text.substr(colon + 1), init_pid, "/etc/group");
        if (!group) return fail(group.error());
        u.gid = group->id;
    }
    return u;
}

}  // namespace dsec::sandbox
