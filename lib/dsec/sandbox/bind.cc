#include "dsec/sandbox/bind.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

namespace dsec::sandbox {

namespace {
// The sandbox's own mounts and files: a bind there would hide or replace them.
constexpr const char* kProtected[] = {"/proc", "/dev", "/sys", "/tmp", "/dsec-init"};

// The real path of an absolute or relative host path, or of an open descriptor.
std::string real_path(const std::string& path) {
    char* p = ::realpath(path.c_str(), nullptr);
    std::string out = p ? p : path;
    std::free(p);
    return out;
}
}  // namespace

bool paths_overlap(const std::string& a, const std::string& b) {
    auto under = [](const std::string& x, const std::string& y) {
        return x == y || y == "/" || (x.size() > y.size() && x.compare(0, y.size(), y) == 0 && x[y.size()] == '/');
    };
    return under(a, b) || under(b, a);
}

Status check_bind_destination(const std::string& dst) {
    auto bad = [&](const std::string& why) {
        return fail(make_error(Code::usage, "--bind destination \"" + dst + "\" " + why));
    };
    if (dst.empty() || dst[0] != '/') return bad("is not an absolute path");
    if (dst == "/") return bad("is the sandbox's root");
    size_t start = 1;
    while (start <= dst.size()) {
        size_t end = dst.find('/', start);
        if (end == std::string::npos) end = dst.size();
        std::string part = dst.substr(start, end - start);
        if (part.empty() || part == "." || part == "..")
            return bad("has an empty, \".\" or \"..\" component");
        start = end + 1;
    }
    for (const char* p : kProtected)
        if (paths_overlap(dst, p) && dst.size() >= std::string(p).size())
            return bad(std::string("lies under ") + p + ", which the sandbox's own mounts hold");
    return {};
}

Result<Bind> parse_bind(const std::string& text) {
    Bind b;
    std::string rest = text;
    // A trailing ":ro" or ":rw" is the mode; host paths with a colon cannot be bound.
    if (rest.size() > 3 && (rest.ends_with(":ro") || rest.ends_with(":rw"))) {
        b.read_only = rest.ends_with(":ro");
        rest.resize(rest.size() - 3);
    }
    auto colon = rest.find(':');
    if (colon == std::string::npos || colon == 0 || rest.find(':', colon + 1) != std::string::npos)
        return fail(make_error(Code::usage, "--bind \"" + text + "\": expected SRC:DST[:ro|rw]"));
    b.src = rest.substr(0, colon);
    b.dst = rest.substr(colon + 1);
    while (b.dst.size() > 1 && b.dst.back() == '/') b.dst.pop_back();
    if (auto r = check_bind_destination(b.dst); !r) return fail(r.error());
    return b;
}

Result<Fd> open_bind_source(const Bind& b, const std::vector<std::string>& forbidden) {
    // The last component is not followed: a symlink there is refused, not bound.
    Fd src(::open(b.src.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!src) return fail(sys_error("open", b.src).context("--bind source"));
    struct stat st;
    if (::fstat(src.get(), &st) < 0) return fail(sys_error("fstat", b.src));
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
        return fail(make_error(Code::bad_input, "--bind source is not a directory or a regular file (devices, FIFOs, "
                                            "sockets and symlinks are refused)", b.src));
    // Where it really is, from the open descriptor (not from the name, which may change).
    std::string where = real_path("/proc/self/fd/" + std::to_string(src.get()));
    for (auto& dir : forbidden)
        if (!dir.empty() && paths_overlap(where, real_path(dir)))
            return fail(make_error(Code::bad_input, "--bind source " + where + " overlaps " + real_path(dir) +
                                                    " (the layer store, root or run directory)", b.src));
    Fd tree(int(::syscall(SYS_open_tree, src.get(), "",
                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE)));
    if (!tree) return fail(sys_error("open_tree", b.src));
    struct mount_attr attr = {};
    attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (b.read_only ? MOUNT_ATTR_RDONLY : 0);
    if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
        return fail(sys_error("mount_setattr", b.src));
    return tree;
}

nlohmann::json binds_record(const std::vector<Bind>& binds) {
    auto out = nlohmann::json::array();
    for (auto& b : binds) out.push_back({{"src", b.src}, {"dst", b.dst}, {"mode", b.read_only ? "ro" : "rw"}});
    return out;
}

std::vector<Bind> binds_from_record(const nlohmann::json& record) {
    std::vector<Bind> out;
    if (!record.is_array()) return out;
    for (auto& b : record)
        if (b.is_object() && b.value("src", "") != "" && check_bind_destination(b.value("dst", "")))
            out.push_back({b.value("src", ""), b.value("dst", ""), b.value("mode", "ro") != "rw"});
    return out;
}

}  // namespace dsec::sandbox
