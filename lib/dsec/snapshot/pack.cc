#include "dsec/snapshot/pack.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include "dsec/layer/safe_tree.h"
#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/paths.h"

namespace dsec::snapshot {

namespace {
constexpr size_t kChunk = size_t(1) << 20;
constexpr uint32_t kIdsInside = 65536;
constexpr uint32_t kNobody = 65534;
constexpr const char* kOverlayPrefix = "user.overlay.";
constexpr const char* kOpaque = "user.overlay.opaque";
constexpr const char* kWhiteout = "user.overlay.whiteout";
constexpr const char* kCaps = "security.capability";

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// The names in an xattr list (NUL-separated), read from an open fd.
std::vector<std::string> xattr_names(int fd) {
    std::vector<std::string> out;
    ssize_t n = ::flistxattr(fd, nullptr, 0);
    if (n <= 0) return out;
    std::string buf(size_t(n), '\0');
    n = ::flistxattr(fd, buf.data(), buf.size());
    for (size_t i = 0; n > 0 && i < size_t(n); i += std::strlen(buf.c_str() + i) + 1) out.emplace_back(buf.c_str() + i);
    return out;
}

Result<std::string> xattr_value(int fd, const std::string& name, const std::string& path) {
    ssize_t n = ::fgetxattr(fd, name.c_str(), nullptr, 0);
    if (n < 0) return fail(sys_error("getxattr " + name, path));
    std::string v(size_t(n), '\0');
    n = ::fgetxattr(fd, name.c_str(), v.data(), v.size());
    if (n < 0) return fail(sys_error("getxattr " + name, path));
    v.resize(size_t(n));
    return v;
}

class Packer {
public:
    Packer(const PackOptions& o, PackStats& s, int root_fd) : opts_(o), stats_(s), root_fd_(root_fd) {}
    Status dir(int src, int dst, const std::string& rel);
    Status hide_in_lowers();
    uid_t inside(uint32_t id) const {
        if (!opts_.inside) return id;
        auto in = opts_.inside(id);
        return in && *in < kIdsInside ? *in : kNobody;
    }

private:
    Status entry(int src_dir, int dst_dir, const std::string& name, const std::string& path);
    Status file(int src_dir, int dst_dir, const std::string& name, const std::string& path, const struct stat& st);
    Status whiteout(int dst_dir, const std::string& name, const std::string& path, const struct stat* st);
    Status meta(int fd, int dst_dir, const std::string& name, const std::string& path, const struct stat& st, int src);

    const PackOptions& opts_;
    PackStats& stats_;
    int root_fd_;  // the staging root: staged paths are relative to it
    std::vector<std::string> walked_;  // scrubbed paths the upper held
    std::map<std::pair<dev_t, ino_t>, std::string> linked_;  // first staged path of each multi-link file
};

// Copies the data of `in` to `out`, holes left as holes; the size comes from `size`.
Status copy_data(int in, int out, off_t size, const std::string& path) {
    std::string buf;
    off_t pos = 0;
    while (pos < size) {
        off_t data = ::lseek(in, pos, SEEK_DATA);
        if (data < 0) {
            if (errno == ENXIO) break;  // only a hole is left
            return fail(sys_error("lseek", path));
        }
        off_t end = ::lseek(in, data, SEEK_HOLE);
        if (end < 0) return fail(sys_error("lseek", path));
        end = std::min(end, size);
        for (off_t at = data; at < end;) {
            if (interrupted()) return fail(interrupted_error());
            loff_t from = at, to = at;
            ssize_t n = ::copy_file_range(in, &from, out, &to, size_t(end - at), 0);
            if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS)) {
                if (buf.empty()) buf.resize(kChunk);
                n = ::pread(in, buf.data(), std::min(kChunk, size_t(end - at)), at);
                if (n > 0 && ::pwrite(out, buf.data(), size_t(n), at) != n) return fail(sys_error("write", path));
            }
            if (n < 0) return fail(sys_error("copy", path));
            if (n == 0) break;  // the file shrank: the frozen sandbox cannot do that, a host process can
            at += n;
        }
        pos = end;
    }
    if (::ftruncate(out, size) < 0) return fail(sys_error("truncate", path));
    return {};
}
}  // namespace

void PackStats::note(const std::string& path, const std::string& what) {
    neutralized_total++;
    if (neutralized.size() < kMaxListed) neutralized.emplace_back(path, what);
}

void PackStats::annotate(nlohmann::json& record) const {
    auto list = nlohmann::json::array();
    for (auto& [path, what] : neutralized) list.push_back({{"path", path}, {"what", what}});
    record["neutralized"] = list;
    record["neutralized_total"] = neutralized_total;
}

bool is_scrubbed(const std::string& path, const std::vector<std::string>& scrub) {
    for (auto& s : scrub)
        if (path == s || (path.size() > s.size() && path.compare(0, s.size(), s) == 0 && path[s.size()] == '/'))
            return true;
    return false;
}

Status Packer::dir(int src, int dst, const std::string& rel) {
    // Sorted: the first name of a hard-linked file is the same at every snapshot.
    auto names = fs::list_dir_at(src, rel.empty() ? "upper" : rel);
    if (!names) return fail(names.error());
    for (auto& n : *names)
        if (auto r = entry(src, dst, n, rel.empty() ? n : rel + "/" + n); !r) return r;
    return {};
}

Status Packer::entry(int src_dir, int dst_dir, const std::string& name, const std::string& path) {
    if (interrupted()) return fail(interrupted_error());
    if (is_scrubbed(path, opts_.scrub)) {
        walked_.push_back(path);
        // Left out of this layer; a copy in a layer below would show through: hidden
        // after the walk (hide_in_lowers), with the paths the upper never touched.
        return {};
    }
    struct stat st;
    if (::fstatat(src_dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) return fail(sys_error("stat", path));
    stats_.entries++;
    if (S_ISDIR(st.st_mode)) {
        Fd from(::openat(src_dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!from) return fail(sys_error("open", path));
        if (::mkdirat(dst_dir, name.c_str(), 0700) < 0) return fail(sys_error("mkdir", path));
        Fd to(::openat(dst_dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!to) return fail(sys_error("open", path));
        if (auto r = dir(from.get(), to.get(), path); !r) return r;
        return meta(to.get(), dst_dir, name, path, st, from.get());
    }
    if (S_ISREG(st.st_mode)) return file(src_dir, dst_dir, name, path, st);
    if (S_ISLNK(st.st_mode)) {
        std::string target(size_t(st.st_size) + 1, '\0');
        ssize_t n = ::readlinkat(src_dir, name.c_str(), target.data(), target.size());
        if (n < 0) return fail(sys_error("readlink", path));
        target.resize(size_t(n));
        if (::symlinkat(target.c_str(), dst_dir, name.c_str()) < 0) return fail(sys_error("symlink", path));
        return meta(-1, dst_dir, name, path, st, -1);
    }
    if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) return whiteout(dst_dir, name, path, &st);
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
        // A device node would open the host's device to whoever starts the layer.
        if (!opts_.keep_special) {
            stats_.note(path, "device");
            return {};
        }
        if (::mknodat(dst_dir, name.c_str(), st.st_mode & S_IFMT, st.st_rdev) < 0) return fail(sys_error("mknod", path));
        return meta(-1, dst_dir, name, path, st, -1);
    }
    if (S_ISFIFO(st.st_mode)) {
        if (::mkfifoat(dst_dir, name.c_str(), 0600) < 0) return fail(sys_error("mkfifo", path));
        return meta(-1, dst_dir, name, path, st, -1);
    }
    // A socket is a live endpoint, meaningless in an image (mkfs.erofs would keep an inert node).
    stats_.note(path, "socket");
    return {};
}

Status Packer::file(int src_dir, int dst_dir, const std::string& name, const std::string& path,
                    const struct stat& st) {
    if (st.st_nlink > 1) {
        auto [it, first] = linked_.try_emplace({st.st_dev, st.st_ino}, path);
        if (!first) {
            if (::linkat(root_fd_, it->second.c_str(), dst_dir, name.c_str(), 0) < 0) return fail(sys_error("link", path));
            return {};
        }
    }
    Fd in(::openat(src_dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!in) return fail(sys_error("open", path));
    // A whiteout as overlayfs writes it when it cannot make a 0/0 device: an empty file so marked.
    if (st.st_size == 0 && ::fgetxattr(in.get(), kWhiteout, nullptr, 0) >= 0) return whiteout(dst_dir, name, path, &st);
    Fd out(::openat(dst_dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out) return fail(sys_error("create", path));
    if (auto r = copy_data(in.get(), out.get(), st.st_size, path); !r) return r;
    stats_.bytes += uint64_t(st.st_size);
    return meta(out.get(), dst_dir, name, path, st, in.get());
}

// Each scrubbed path present in a layer below gets a whiteout; missing parents are made
// with the attributes the layer below gives them, since an upper directory's own
// attributes are what a merged directory shows.
Status Packer::hide_in_lowers() {
    for (auto& path : opts_.scrub) {
        bool in_upper = std::find(walked_.begin(), walked_.end(), path) != walked_.end();
        auto st = opts_.lower_stat ? opts_.lower_stat(path) : std::nullopt;
        if (st || in_upper) stats_.scrubbed.push_back(path);
        if (!st) continue;
        Fd dir(::dup(root_fd_));
        size_t at = 0;
        for (size_t slash; dir && (slash = path.find('/', at)) != std::string::npos; at = slash + 1) {
            std::string name = path.substr(at, slash - at), sub = path.substr(0, slash);
            Fd next(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!next && errno == ENOENT) {
                auto parent = opts_.lower_stat(sub);
                if (!parent || !S_ISDIR(parent->st_mode)) break;
                if (::mkdirat(dir.get(), name.c_str(), 0700) < 0) return fail(sys_error("mkdir", sub));
                next.reset(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                struct timespec times[2] = {parent->st_mtim, parent->st_mtim};
                if (!next || ::fchown(next.get(), parent->st_uid, parent->st_gid) < 0 ||
                    ::fchmod(next.get(), parent->st_mode & 07777) < 0 || ::futimens(next.get(), times) < 0)
                    return fail(sys_error("chown", sub));
            }
            dir = std::move(next);
        }
        // No directory to put it in (the upper has a file there, say): nothing shows through.
        if (!dir || path.find('/', at) != std::string::npos) continue;
        if (layer::SafeTree::type_at(dir.get(), path.substr(at)) == 0) {
            // The directory keeps the mtime it had (its own, or the lower's given above).
            struct stat before;
            if (::fstat(dir.get(), &before) < 0) return fail(sys_error("stat", path));
            if (auto r = whiteout(dir.get(), path.substr(at), path, nullptr); !r) return r;
            struct timespec times[2] = {before.st_mtim, before.st_mtim};
            if (::futimens(dir.get(), times) < 0) return fail(sys_error("utimensat", path));
        }
    }
    return {};
}

Status Packer::whiteout(int dst_dir, const std::string& name, const std::string& path, const struct stat* st) {
    if (::mknodat(dst_dir, name.c_str(), S_IFCHR | 0600, makedev(0, 0)) < 0) return fail(sys_error("mknod", path));
    if (st && ::fchownat(dst_dir, name.c_str(), inside(st->st_uid), inside(st->st_gid), AT_SYMLINK_NOFOLLOW) < 0)
        return fail(sys_error("chown", path));
    struct timespec zero[2] = {{0, 0}, {0, 0}};  // a whiteout's time means nothing: the same every time
    if (::utimensat(dst_dir, name.c_str(), zero, AT_SYMLINK_NOFOLLOW) < 0) return fail(sys_error("utimensat", path));
    return {};
}

// Owner, mode and the attributes a layer may carry. `fd`/`src` are the open staged and
// source entries (-1 for symlinks, devices and FIFOs, which carry no attributes here).
Status Packer::meta(int fd, int dst_dir, const std::string& name, const std::string& path, const struct stat& st,
                    int src) {
    mode_t mode = st.st_mode & 07777;
    if (S_ISREG(st.st_mode) && (mode & 06000) && !opts_.keep_special) {
        // Set-id programs would let a sandboxed user become another one.
        if (mode & S_ISUID) stats_.note(path, "setuid");
        if (mode & S_ISGID) stats_.note(path, "setgid");
        mode &= ~mode_t(06000);
    }
    // Files keep their mtimes (python's .pyc, make and rsync compare them), and the same
    // files snapshotted again give the same image.
    struct timespec times[2] = {st.st_mtim, st.st_mtim};
    if (fd < 0) {
        if (::fchownat(dst_dir, name.c_str(), inside(st.st_uid), inside(st.st_gid), AT_SYMLINK_NOFOLLOW) < 0)
            return fail(sys_error("chown", path));
        if (!S_ISLNK(st.st_mode) && ::fchmodat(dst_dir, name.c_str(), mode, 0) < 0) return fail(sys_error("chmod", path));
        if (::utimensat(dst_dir, name.c_str(), times, AT_SYMLINK_NOFOLLOW) < 0) return fail(sys_error("utimensat", path));
        return {};
    }
    if (::fchown(fd, inside(st.st_uid), inside(st.st_gid)) < 0) return fail(sys_error("chown", path));
    for (auto& n : xattr_names(src)) {
        bool opaque = n == kOpaque;
        bool user = starts_with(n, "user.") && !starts_with(n, kOverlayPrefix);
        bool caps = n == kCaps && opts_.keep_special;
        if (!opaque && !user && !caps) {
            // The sandbox's own overlay bookkeeping is not content; anything else is neutralised.
            if (!starts_with(n, kOverlayPrefix)) stats_.note(path, "xattr:" + n);
            continue;
        }
        auto v = xattr_value(src, n, path);
        if (!v) return fail(v.error());
        // "x" marks a directory holding xattr whiteouts, not an opaque one.
        if (opaque && *v != "y") continue;
        for (const char* set : opaque ? std::vector<const char*>{"trusted.overlay.opaque", kOpaque}
                                      : std::vector<const char*>{n.c_str()})
            if (::fsetxattr(fd, set, v->data(), v->size(), 0) < 0)
                return fail(sys_error(std::string("setxattr ") + set, path));
    }
    // After the xattrs: writing security.capability would be refused on a set-id file,
    // and chown clears set-id bits, so the mode goes last.
    if (::fchmod(fd, mode) < 0) return fail(sys_error("chmod", path));
    if (::futimens(fd, times) < 0) return fail(sys_error("utimensat", path));
    return {};
}

Status copy_upper(int upper_fd, const std::string& dest, const PackOptions& opts, PackStats& stats) {
    Fd to(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!to) return fail(sys_error("open", dest));
    Packer p(opts, stats, to.get());
    if (auto r = p.dir(upper_fd, to.get(), ""); !r) return r;
    if (auto r = p.hide_in_lowers(); !r) return r;
    // The root as every layer has it: an overlay shows its upper's root, never a lower's,
    // and the upper's root differs with --disk (a tmpfs) though the files are the same.
    struct timespec zero[2] = {{0, 0}, {0, 0}};
    if (::fchown(to.get(), 0, 0) < 0 || ::fchmod(to.get(), 0755) < 0 || ::futimens(to.get(), zero) < 0)
        return fail(sys_error("chown", dest));
    return {};
}

}  // namespace dsec::snapshot
