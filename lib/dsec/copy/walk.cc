#include "dsec/copy/walk.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "dsec/sys/paths.h"
#include "dsec/sys/fs.h"

namespace dsec::copy {

namespace {
constexpr size_t kChunk = size_t(1) << 16;
constexpr const char* kChanged = "changed while copied";

// Why an open or stat that just failed is no error but a skip: the entry went away or
// turned into something else under the walk (errno is read, not changed). Null: a real error.
const char* moved() {
    if (errno == ENOENT) return "vanished";
    if (errno == ELOOP || errno == ENOTDIR) return kChanged;
    return nullptr;
}

Entry entry_of(const std::string& path, Kind kind, const struct stat& st) {
    Entry e;
    e.path = path;
    e.kind = kind;
    e.mode = st.st_mode & 07777;
    e.uid = st.st_uid;
    e.gid = st.st_gid;
    e.mtime = st.st_mtim.tv_sec;
    e.mtime_ns = st.st_mtim.tv_nsec;
    return e;
}

class Walker {
public:
    explicit Walker(Guard& g) : g_(g) {}
    Status one(int dirfd, const std::string& name, const std::string& path);

private:
    Status dir(int dirfd, const std::string& name, const std::string& path);
    dev_t fs_ = 0;  // the filesystem of the top directory: the walk stays on it
    bool top_ = true;
    Status file(int dirfd, const std::string& name, const std::string& path);
    Status symlink(int dirfd, const std::string& name, const std::string& path, const struct stat& st);
    Status contents(int fd, uint64_t size, const std::string& path);

    Guard& g_;
    std::map<std::pair<dev_t, ino_t>, std::string> links_;  // files with nlink > 1, first path
    std::vector<char> buf_ = std::vector<char>(kChunk);
};

Status Walker::one(int dirfd, const std::string& name, const std::string& path) {
    if (interrupted()) return fail(interrupted_error());
    struct stat st;
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (const char* why = moved()) return g_.skip(path, why);
        return fail(sys_error("stat", path));
    }
    switch (st.st_mode & S_IFMT) {
        case S_IFDIR: return dir(dirfd, name, path);
        case S_IFREG: return file(dirfd, name, path);
        case S_IFLNK: return symlink(dirfd, name, path, st);
        default: return g_.skip(path, special_name(st.st_mode));
    }
}

Status Walker::dir(int dirfd, const std::string& name, const std::string& path) {
    Fd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st;
    if (!fd || ::fstat(fd.get(), &st) < 0) {
        if (const char* why = moved()) return g_.skip(path, why);
        return fail(sys_error("open", path));
    }
    // Directories report their filesystem's device (overlayfs too, unlike its files):
    // one that differs is a mount point (a sandbox's /proc, /dev, /tmp), left out as
    // cp -x and tar --one-file-system do.
    if (top_) fs_ = st.st_dev;
    top_ = false;
    if (st.st_dev != fs_) return g_.skip(path, "mount point");
    if (auto r = g_.add(entry_of(path, Kind::dir, st)); !r) return r;
    auto names = fs::list_dir_at(fd.get(), path);
    if (!names) return fail(names.error());
    for (auto& n : *names)
        if (auto r = one(fd.get(), n, path + "/" + n); !r) return r;
    return {};
}

Status Walker::file(int dirfd, const std::string& name, const std::string& path) {
    // O_NONBLOCK: a FIFO swapped in since the fstatat opens at once instead of waiting
    // for a writer; fstat below then shows what was really opened.
    Fd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
    struct stat st;
    if (!fd || ::fstat(fd.get(), &st) < 0) {
        if (const char* why = moved()) return g_.skip(path, why);
        return fail(sys_error("open", path));
    }
    if (!S_ISREG(st.st_mode)) return g_.skip(path, special_name(st.st_mode));
    if (st.st_nlink > 1) {
        auto [it, first] = links_.try_emplace({st.st_dev, st.st_ino}, path);
        if (!first) {
            Entry e = entry_of(path, Kind::hardlink, st);
            e.target = it->second;
            return g_.add(e);
        }
    }
    Entry e = entry_of(path, Kind::file, st);
    e.size = uint64_t(st.st_size);
    if (auto r = g_.add(e); !r) return r;
    if (auto r = contents(fd.get(), e.size, path); !r) return r;
    return g_.end_file();
}

// Exactly `size` bytes: what the file holds now is read up to there, and zeros stand in
// for what it lost since fstat.
Status Walker::contents(int fd, uint64_t size, const std::string& path) {
    for (uint64_t left = size; left > 0;) {
        if (interrupted()) return fail(interrupted_error());
        size_t want = size_t(std::min<uint64_t>(left, buf_.size()));
        ssize_t n = ::read(fd, buf_.data(), want);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(sys_error("read", path));
        if (n == 0) {
            std::memset(buf_.data(), 0, want);
            n = ssize_t(want);
        }
        if (auto r = g_.data(buf_.data(), size_t(n)); !r) return r;
        left -= uint64_t(n);
    }
    return {};
}

Status Walker::symlink(int dirfd, const std::string& name, const std::string& path, const struct stat& st) {
    std::string target(4096, '\0');
    ssize_t n = ::readlinkat(dirfd, name.c_str(), target.data(), target.size());
    if (n < 0) {
        if (errno == ENOENT) return g_.skip(path, "vanished");
        if (errno == EINVAL) return g_.skip(path, kChanged);  // no longer a symlink
        return fail(sys_error("readlink", path));
    }
    target.resize(size_t(n));
    Entry e = entry_of(path, Kind::symlink, st);
    e.target = target;
    return g_.add(e);
}
}  // namespace

Status walk(const Place& from, const std::string& top, Guard& guard) {
    // Below the top a missing entry has vanished under the walk; the top itself is a
    // source that is not there.
    struct stat st;
    if (::fstatat(from.dir.get(), from.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0)
        return fail(sys_error("stat", from.dir_path + (from.dir_path.ends_with('/') ? "" : "/") + from.name));
    Walker w(guard);
    return w.one(from.dir.get(), from.name, top);
}

}  // namespace dsec::copy
