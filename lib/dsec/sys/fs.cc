#include "dsec/sys/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace dsec::fs {

std::string dirname(const std::string& path) {
    auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

Status write_text(const std::string& path, std::string_view value) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (!fd) return fail(sys_error("open", path));
    // One write: a control file takes its value whole or refuses it (a split write
    // would be two values).
    ssize_t n = ::write(fd.get(), value.data(), value.size());
    if (n < 0) return fail(sys_error("write", path).context("value " + std::string(value)));
    if (size_t(n) != value.size())
        return fail(make_error(Code::io, "short write", path).context("value " + std::string(value)));
    return {};
}

Status write_all(int fd, std::string_view data, const std::string& what) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(sys_error("write", what));
        }
        data.remove_prefix(size_t(n));
    }
    return {};
}

Status sync_dir(const std::string& path) {
    Fd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return fail(sys_error("open", path));
    if (::fsync(dir.get()) < 0 && errno != EINVAL) return fail(sys_error("fsync", path));
    return {};
}

Status atomic_write(const std::string& path, std::string_view data, unsigned mode) {
    // pid and a counter: two threads writing the same path must not share a temp file
    // (one would truncate what the other has already renamed into place).
    static std::atomic<unsigned> serial{0};
    std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
    if (!fd) return fail(sys_error("open", tmp));
    auto cleanup_with = [&](Error e) {
        ::unlink(tmp.c_str());
        return fail(std::move(e));
    };
    if (auto w = write_all(fd.get(), data, tmp); !w) return cleanup_with(w.error());
    if (::fchmod(fd.get(), mode) < 0) return cleanup_with(sys_error("fchmod", tmp));
    if (::fsync(fd.get()) < 0) return cleanup_with(sys_error("fsync", tmp));
    fd.reset();
    if (auto r = fs::rename(tmp, path); !r) return cleanup_with(r.error());
    return sync_dir(dirname(path));
}

Result<bool> write_once(const std::string& path, std::string_view data, unsigned mode) {
    std::string dir = dirname(path);
    Fd fd(::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode));
    std::string tmp;  // named only where the filesystem has no O_TMPFILE
    if (!fd) {
        if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return fail(sys_error("open", dir + " (O_TMPFILE)"));
        static std::atomic<unsigned> serial{0};
        tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
        fd.reset(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
        if (!fd) return fail(sys_error("open", tmp));
    }
    auto cleanup_with = [&](Error e) {
        if (!tmp.empty()) ::unlink(tmp.c_str());
        return fail(std::move(e));
    };
    if (auto w = write_all(fd.get(), data, path); !w) return cleanup_with(w.error());
    if (::fchmod(fd.get(), mode) < 0) return cleanup_with(sys_error("fchmod", path));
    if (::fsync(fd.get()) < 0) return cleanup_with(sys_error("fsync", path));
    // The first link wins; EEXIST: another writer's file is there, and stays.
    std::string self = "/proc/self/fd/" + std::to_string(fd.get());
    int linked = tmp.empty() ? ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW)
                             : ::link(tmp.c_str(), path.c_str());
    int err = errno;
    if (!tmp.empty()) ::unlink(tmp.c_str());
    if (linked < 0) {
        if (err == EEXIST) return false;
        return fail(errno_error(err, "link", path));
    }
    if (auto r = sync_dir(dir); !r) return fail(r.error());
    return true;
}

Result<std::string> read_file(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return fail(sys_error("open", path));
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(sys_error("read", path));
        }
        if (n == 0) break;
        out.append(buf, size_t(n));
    }
    return out;
}

namespace {
// A path call (mkdir, stat, mkdtemp), again while a network filesystem answers ESTALE: a
// directory another node made or replaced meanwhile (two nodes publishing into one shared
// store at once) leaves this client's handle of the parent stale until it looks it up
// again, which the kernel does once and a FUSE filesystem (GlusterFS) may need more than
// once. The call's result, errno set as it left it.
template <typename Call>
int fresh(Call call) {
    int rc;
    for (int attempt = 0; (rc = call()) < 0 && errno == ESTALE && attempt < 5; attempt++)
        ::usleep(10000 * (attempt + 1));
    return rc;
}
}  // namespace

Status mkdir_p(const std::string& path, unsigned mode) {
    if (path.empty()) return {};
    auto make = [&] { return fresh([&] { return ::mkdir(path.c_str(), mode); }); };
    if (make() == 0) return {};
    if (errno == EEXIST) {
        struct stat st;
        if (fresh([&] { return ::stat(path.c_str(), &st); }) == 0 && S_ISDIR(st.st_mode)) return {};
        if (errno != ENOENT) return fail(errno_error(ENOTDIR, "mkdir", path));
    }
    if (errno != ENOENT) return fail(sys_error("mkdir", path));
    auto parent = dirname(path);
    if (parent != path) {
        if (auto r = mkdir_p(parent, mode); !r) return r;
    }
    if (make() < 0 && errno != EEXIST) return fail(sys_error("mkdir", path));
    return {};
}

Result<std::vector<std::string>> list_dir(const std::string& path) {
    std::vector<std::string> names;
    DIR* dir = ::opendir(path.c_str());
    if (!dir) {
        if (errno == ENOENT) return names;
        return fail(sys_error("opendir", path));
    }
    while (struct dirent* ent = ::readdir(dir)) {
        std::string name = ent->d_name;
        if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

Result<std::vector<std::string>> list_dir_at(int dirfd, const std::string& where) {
    // A fresh open of ".": readdir then owns its own fd and offset, not the caller's.
    int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return fail(sys_error("open", where));
    DIR* dir = ::fdopendir(fd);
    if (!dir) {
        ::close(fd);
        return fail(sys_error("opendir", where));
    }
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* ent = ::readdir(dir)) {
        std::string name = ent->d_name;
        if (name != "." && name != "..") names.push_back(std::move(name));
    }
    int err = errno;
    ::closedir(dir);
    if (err) return fail(errno_error(err, "readdir", where));
    std::sort(names.begin(), names.end());
    return names;
}

bool exists(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
}

static Result<Lock> lock_impl(const std::string& path, LockMode mode, bool wait) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 && (errno == EROFS || errno == EACCES)) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(sys_error("open", path));
    Fd owner(fd);
    int op = (mode == LockMode::shared ? LOCK_SH : LOCK_EX) | (wait ? 0 : LOCK_NB);
    while (::flock(fd, op) < 0) {
        if (errno == EINTR) continue;
        if (errno == EWOULDBLOCK) return fail(errno_error(EBUSY, "flock", path));
        return fail(sys_error("flock", path));
    }
    return Lock(std::move(owner));
}

Result<Lock> lock(const std::string& path, LockMode mode) { return lock_impl(path, mode, true); }
Result<Lock> try_lock(const std::string& path, LockMode mode) { return lock_impl(path, mode, false); }

Result<Lock> lock_dir(const std::string& path, bool wait) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return fail(sys_error("open", path));
    while (::flock(fd.get(), LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
        if (errno == EINTR) continue;
        if (errno == EWOULDBLOCK) return fail(errno_error(EBUSY, "flock", path));
        return fail(sys_error("flock", path));
    }
    return Lock(std::move(fd));
}

Status rename(const std::string& from, const std::string& to) {
    if (fresh([&] { return ::rename(from.c_str(), to.c_str()); }) < 0) return fail(sys_error("rename", to));
    return {};
}

Result<TempDir> TempDir::make(const std::string& parent, const std::string& prefix) {
    std::string templ;
    auto made = fresh([&] {
        templ = parent + "/" + prefix + "XXXXXX";  // mkdtemp fills it in: a new one each time
        return ::mkdtemp(templ.data()) ? 0 : -1;
    });
    if (made < 0) return fail(sys_error("mkdtemp", templ));
    return TempDir(std::move(templ));
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDir::~TempDir() {
    if (!path_.empty()) (void)remove_tree(path_);
}

}  // namespace dsec::fs
