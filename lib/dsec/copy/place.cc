#include "dsec/copy/place.h"

#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "dsec/sys/fs.h"

namespace dsec::copy {

namespace {
std::string trimmed(std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
}
}  // namespace

std::string basename_of(std::string p) {
    p = trimmed(std::move(p));
    if (p == "/") return "";
    auto slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool plain_name(const std::string& n) {
    return !n.empty() && n != "." && n != ".." && n.find('/') == std::string::npos && n.size() <= 255;
}

Result<Fd> open_at(const Root& root, const std::string& path, int flags) {
    struct open_how how = {};
    how.flags = uint64_t(flags | O_CLOEXEC);
    how.resolve = RESOLVE_NO_MAGICLINKS | (root.jailed ? RESOLVE_IN_ROOT : 0);
    long fd = ::syscall(SYS_openat2, root.fd, path.c_str(), &how, sizeof how);
    if (fd < 0) return fail(sys_error("openat2", root.label + path));
    return Fd(int(fd));
}

Result<Place> landing(const Root& root, const std::string& dst, const std::string& name, bool follow_last) {
    std::string d = trimmed(dst);
    struct stat st;
    if (!follow_last && ::fstatat(root.fd, d.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        return fail(make_error(Code::bad_input,
                               "the destination is a symlink (it may have come out of a sandbox): it is neither "
                               "followed nor replaced; name the directory it points to",
                               root.label + dst));
    auto dir = open_at(root, d, O_PATH | O_DIRECTORY | (follow_last ? 0 : O_NOFOLLOW));
    if (dir) {
        if (!plain_name(name))
            return fail(make_error(Code::bad_input, "the source has no name to take inside an existing directory: "
                                                "name the target", root.label + dst));
        return Place{std::move(*dir), name, root.label + d};
    }
    if (dir.error().err != ENOENT && dir.error().err != ENOTDIR) return fail(dir.error());
    std::string leaf = basename_of(d);
    if (!plain_name(leaf)) return fail(make_error(Code::bad_input, "not a name a copy can take", root.label + dst));
    auto parent = open_at(root, fs::dirname(d), O_PATH | O_DIRECTORY);
    if (!parent) return fail(std::move(parent.error()).context("the directory the copy would go in"));
    return Place{std::move(*parent), leaf, root.label + fs::dirname(d)};
}

Result<Fd> landing_dir(const Root& root, const std::string& dst) {
    auto dir = open_at(root, dst, O_PATH | O_DIRECTORY);
    if (!dir && dir.error().err == ENOTDIR)
        return fail(make_error(Code::bad_input, "a tar stream is extracted into a directory: this is none",
                               root.label + dst));
    return dir;
}

Result<Place> source(const Root& root, const std::string& src) {
    std::string s = trimmed(src);
    if (s.empty()) return fail(make_error(Code::bad_input, "empty source path"));
    if (s == "/") {
        auto dir = open_at(root, "/", O_PATH | O_DIRECTORY);
        if (!dir) return fail(dir.error());
        return Place{std::move(*dir), ".", root.label + "/"};
    }
    std::string leaf = basename_of(s);
    if (leaf == "." || leaf == "..") {
        if (root.jailed) return fail(make_error(Code::bad_input, "name the file or directory itself", root.label + src));
        // The host's path: its real name is what lands at the destination.
        char* real = ::realpath(s.c_str(), nullptr);
        if (!real) return fail(sys_error("realpath", src));
        std::string r = real;
        std::free(real);
        return source(root, r);
    }
    auto parent = open_at(root, fs::dirname(s), O_PATH | O_DIRECTORY);
    if (!parent) return fail(parent.error());
    return Place{std::move(*parent), leaf, root.label + fs::dirname(s)};
}

}  // namespace dsec::copy
