#include "dsec/layer/safe_tree.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "dsec/sys/fs.h"

namespace dsec::layer {

namespace {
Error hostile(const std::string& why, std::string_view path) {
    return make_error(Code::bad_input, why, std::string(path));
}
}  // namespace

long SafeTree::open_below(const std::string& path, uint64_t flags) const {
    struct open_how how = {};
    how.flags = flags;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    if (!cross_mounts_) how.resolve |= RESOLVE_NO_XDEV;
    return ::syscall(SYS_openat2, root_fd_.get(), path.c_str(), &how, sizeof how);
}

Result<std::string> clean_path(std::string_view raw) {
    if (raw.size() > kMaxPath) return fail(hostile("path longer than 4096 bytes", raw.substr(0, 64)));
    if (!raw.empty() && raw[0] == '/') return fail(hostile("absolute path in archive", raw));
    std::string out;
    out.reserve(raw.size());
    size_t i = 0;
    while (i < raw.size()) {
        size_t j = raw.find('/', i);
        if (j == std::string_view::npos) j = raw.size();
        std::string_view comp = raw.substr(i, j - i);
        i = j + 1;
        if (comp.empty() || comp == ".") continue;
        if (comp == "..") return fail(hostile("path climbs out of the tree (\"..\")", raw));
        if (comp.size() > kMaxName) return fail(hostile("path component longer than 255 bytes", raw.substr(0, 64)));
        if (!out.empty()) out += '/';
        out += comp;
    }
    return out;
}

std::string_view leaf_of(std::string_view path) {
    auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string_view parent_of(std::string_view path) {
    auto slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

Result<Fd> SafeTree::open_existing(std::string_view dir) const {
    std::string d = dir.empty() ? std::string(".") : std::string(dir);
    long fd = open_below(d, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) return Fd(int(fd));
    if (errno == ENOENT) return Fd();
    if (errno == ELOOP || errno == EXDEV) return fail(hostile("path goes through a symlink", d));
    if (errno == ENOTDIR) return fail(hostile("a parent in the path is not a directory", d));
    return fail(sys_error("openat2", root_ + "/" + d));
}

Result<SafeTree> SafeTree::open(const std::string& root) {
    Fd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return fail(sys_error("open", root));
    return SafeTree(root, std::move(fd), false);
}

SafeTree SafeTree::adopt(Fd root_fd, std::string name, bool cross_mounts) {
    return SafeTree(std::move(name), std::move(root_fd), cross_mounts);
}

unsigned SafeTree::type_at(int dirfd, const std::string& name) {
    struct stat st;
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) return 0;
    return st.st_mode & S_IFMT;
}

Result<int> SafeTree::dir(std::string_view dir) {
    if (dir.empty()) return root_fd_.get();
    if (cached_fd_ && cached_dir_ == dir) return cached_fd_.get();
    std::string d(dir);
    long fd = open_below(d, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP || errno == EXDEV) return fail(hostile("path goes through a symlink", d));
        if (errno == ENOTDIR) return fail(hostile("a parent in the path is not a directory", d));
        if (errno != ENOENT) return fail(sys_error("openat2", root_ + "/" + d));
        auto made = walk_creating(d);
        if (!made) return fail(made.error());
        cached_fd_ = std::move(*made);
    } else {
        cached_fd_.reset(int(fd));
    }
    cached_dir_ = d;
    return cached_fd_.get();
}

// Walks `dir` one component at a time, creating what is missing; every step refuses
// symlinks (O_NOFOLLOW makes open fail with ELOOP on one).
Result<Fd> SafeTree::walk_creating(std::string_view dir) {
    Fd cur(::dup(root_fd_.get()));
    if (!cur) return fail(sys_error("dup", root_));
    size_t i = 0;
    while (i <= dir.size()) {
        size_t j = dir.find('/', i);
        if (j == std::string_view::npos) j = dir.size();
        std::string comp(dir.substr(i, j - i));
        i = j + 1;
        if (::mkdirat(cur.get(), comp.c_str(), 0755) < 0 && errno != EEXIST)
            return fail(sys_error("mkdir", root_ + "/" + std::string(dir.substr(0, j))));
        Fd next(::openat(cur.get(), comp.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!next) {
            if (errno == ENOTDIR || errno == ELOOP)
                return fail(hostile("a parent in the path is a symlink or not a directory", std::string(dir)));
            return fail(sys_error("open", root_ + "/" + std::string(dir.substr(0, j))));
        }
        cur = std::move(next);
    }
    return cur;
}

namespace {
// Empties the directory open as `fd` (not following links, not leaving the tree).
Status empty_dir(int fd, const std::string& where) {
    auto names = fs::list_dir_at(fd, where);
    if (!names) return fail(names.error());
    for (auto& n : *names) {
        bool is_dir = SafeTree::type_at(fd, n) == S_IFDIR;
        if (is_dir) {
            Fd sub(::openat(fd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!sub) return fail(sys_error("open", where + "/" + n));
            if (auto r = empty_dir(sub.get(), where + "/" + n); !r) return r;
        }
        if (::unlinkat(fd, n.c_str(), is_dir ? AT_REMOVEDIR : 0) < 0) return fail(sys_error("unlink", where + "/" + n));
    }
    return {};
}
}  // namespace

Result<bool> SafeTree::remove(int dirfd, const std::string& name) {
    unsigned type = type_at(dirfd, name);
    if (type == 0) return false;
    // The cached directory may sit below what goes: forget it (after this call, since
    // `dirfd` may be that very fd).
    struct Forget {
        SafeTree* t;
        ~Forget() {
            t->cached_fd_.reset();
            t->cached_dir_.clear();
        }
    } forget{this};
    if (type == S_IFDIR) {
        Fd sub(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub) return fail(sys_error("open", root_ + "/.../" + name));
        if (auto r = empty_dir(sub.get(), root_ + "/.../" + name); !r) return fail(r.error());
    }
    if (::unlinkat(dirfd, name.c_str(), type == S_IFDIR ? AT_REMOVEDIR : 0) < 0)
        return fail(sys_error("unlink", root_ + "/.../" + name));
    return true;
}

Status SafeTree::clear_impl(const std::string& dir_path, bool (*keep)(void*, const std::string&), void* ctx) {
    auto fd = dir(dir_path);
    if (!fd) return fail(fd.error());
    Fd d(::openat(*fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!d) return fail(sys_error("open", root_ + "/" + dir_path));
    auto names = fs::list_dir_at(d.get(), root_ + "/" + dir_path);
    if (!names) return fail(names.error());
    for (auto& n : *names) {
        if (keep(ctx, dir_path.empty() ? n : dir_path + "/" + n)) continue;
        if (auto r = remove(d.get(), n); !r) return fail(r.error());
    }
    return {};
}

}  // namespace dsec::layer
