// remove_tree: removing what a sandbox (or a host tool) may have left in a directory:
// chains of any depth, immutable and append-only entries, symlinks and mounts inside,
// entries that vanish or change type while the walk goes.
//
// The walk is iterative and holds at most kMaxOpenDirs directories open. A directory
// deeper than that is renamed up into the top directory under a name of our own and
// removed from there later: descriptors, stack and path strings stay bounded whatever
// the depth, and the rename cannot fail with EXDEV since the walk never leaves the top's
// mount.
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "dsec/sys/fs.h"

namespace dsec::fs {

namespace {

// Directories open at once, the top one included.
constexpr size_t kMaxOpenDirs = 16;
// What refuses unlink, rmdir and rename even to root (EPERM).
constexpr int kUndeletable = FS_IMMUTABLE_FL | FS_APPEND_FL;

struct CloseDir {
    void operator()(DIR* d) const { ::closedir(d); }
};
using DirStream = std::unique_ptr<DIR, CloseDir>;

bool is_dot(const char* name) { return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])); }

// Clears the immutable and append-only flags of an open file or directory; true when it
// had some and they are gone (needs CAP_LINUX_IMMUTABLE).
bool clear_flags(int fd) {
    int flags = 0;
    if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0 || !(flags & kUndeletable)) return false;
    flags &= ~kUndeletable;
    return ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
}

bool is_openable(mode_t mode) { return S_ISREG(mode) || S_ISDIR(mode) || S_ISFIFO(mode); }

// The same for `name` in `dirfd`, opened without following a symlink. Device nodes are
// never opened (that could act on their driver); sockets and symlinks cannot be.
bool clear_flags_at(int dirfd, const char* name) {
    struct stat st;
    if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !is_openable(st.st_mode)) return false;
    Fd fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    // Re-checked on the open file: the entry may have been replaced since the fstatat.
    if (!fd || ::fstat(fd.get(), &st) < 0 || !is_openable(st.st_mode)) return false;
    return clear_flags(fd.get());
}

// Runs `op` again after clearing the flags of the entry and of the directories involved
// when it failed with EPERM and some were cleared; otherwise its result and errno stand.
// A negative dirfd (AT_FDCWD) is a directory outside the tree: its flags stay.
template <typename Op>
int retry_without_flags(Op op, int dirfd, const char* name, int other_dirfd = -1) {
    if (op() == 0) return 0;
    if (errno != EPERM) return -1;
    bool cleared = dirfd >= 0 && clear_flags(dirfd);
    cleared = (other_dirfd >= 0 && clear_flags(other_dirfd)) || cleared;
    cleared = clear_flags_at(dirfd, name) || cleared;
    if (!cleared) {
        errno = EPERM;
        return -1;
    }
    return op();
}

int unlink_at(int dirfd, const char* name, int flags) {
    return retry_without_flags([&] { return ::unlinkat(dirfd, name, flags); }, dirfd, name);
}

// Gives an open directory owner rwx (it may come from an archive without them); an
// immutable one refuses the chmod until its flags are cleared.
void make_writable(int fd, mode_t mode) {
    if ((mode & 0700) == 0700) return;
    if (::fchmod(fd, 0700) < 0 && errno == EPERM && clear_flags(fd)) ::fchmod(fd, 0700);
}

std::atomic<unsigned long> moved_serial{0};

class Remover {
public:
    Remover(DirStream top, dev_t dev, const std::string& path) : where_(path), dev_(dev) {
        stack_.reserve(kMaxOpenDirs);
        stack_.push_back({std::move(top), 0, {}});
    }

    // Empties the top directory; the first error met, if any (the walk goes on past it).
    Status run() {
        walk();
        while (!moved_.empty()) {
            std::string name = std::move(moved_.back());
            moved_.pop_back();
            enter(name.c_str());
            walk();
        }
        if (error_) return fail(std::move(*error_));
        return {};
    }

private:
    struct Frame {
        DirStream dir;
        size_t parent_len;  // length of where_ in the parent
        std::string name;   // name in the parent
    };

    int fd() const { return ::dirfd(stack_.back().dir.get()); }
    int top_fd() const { return ::dirfd(stack_.front().dir.get()); }
    std::string at(const char* name) const { return where_ + "/" + name; }
    void note(Error e) {
        if (!error_) error_ = std::move(e);
    }

    // Removes entries until the top directory has none left to give.
    void walk() {
        for (;;) {
            errno = 0;
            struct dirent* ent = ::readdir(stack_.back().dir.get());
            if (!ent) {
                if (errno) note(sys_error("readdir", where_));
                if (stack_.size() == 1) return;
                leave();
                continue;
            }
            const char* name = ent->d_name;
            if (is_dot(name)) continue;
            unsigned char type = ent->d_type;
            if (type == DT_UNKNOWN) {
                struct stat st;
                if (::fstatat(fd(), name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                    if (errno != ENOENT) note(sys_error("lstat", at(name)));
                    continue;
                }
                type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
            }
            if (type != DT_DIR) {
                if (unlink_at(fd(), name, 0) == 0 || errno == ENOENT) continue;
                // EISDIR: replaced by a directory since readdir; remove it as one.
                if (errno != EISDIR) {
                    note(sys_error("unlink", at(name)));
                    continue;
                }
            }
            enter(name);
        }
    }

    // Opens the directory `name` below the deepest one and makes it the deepest.
    void enter(const char* name) {
        if (stack_.size() >= kMaxOpenDirs) return move_up(name);
        struct open_how how = {};
        how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
        // Never through a symlink nor into another mount (bind mounts of the same
        // filesystem included, which st_dev does not tell).
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV;
        Fd child(int(::syscall(SYS_openat2, fd(), name, &how, sizeof how)));
        if (!child) {
            if (errno == ENOENT) return;  // gone meanwhile
            if (errno == ENOTDIR || errno == ELOOP) {
                // No longer a directory (or a symlink now): remove the entry itself.
                if (unlink_at(fd(), name, 0) < 0 && errno != ENOENT) note(sys_error("unlink", at(name)));
                return;
            }
            if (errno == EXDEV) return note(errno_error(EBUSY, "remove", at(name)));
            return note(sys_error("openat2", at(name)));
        }
        struct stat st;
        if (::fstat(child.get(), &st) < 0) return note(sys_error("fstat", at(name)));
        if (st.st_dev != dev_) return note(errno_error(EBUSY, "remove", at(name)));
        make_writable(child.get(), st.st_mode);
        DirStream dir(::fdopendir(child.get()));
        if (!dir) return note(sys_error("opendir", at(name)));
        child.release();
        size_t parent_len = where_.size();
        where_.append("/").append(name);
        stack_.push_back({std::move(dir), parent_len, name});
    }

    // Closes the deepest directory (now empty, unless something failed) and removes it.
    void leave() {
        Frame done = std::move(stack_.back());
        stack_.pop_back();
        done.dir.reset();
        where_.resize(done.parent_len);
        if (unlink_at(fd(), done.name.c_str(), AT_REMOVEDIR) < 0 && errno != ENOENT)
            note(sys_error("rmdir", at(done.name.c_str())));
    }

    // Too deep to open one more directory: rename it into the top directory under a
    // fresh name, to be removed from there once the walk is back at the top.
    void move_up(const char* name) {
        for (int tries = 0; tries < 100; tries++) {
            std::string temp = ".dsec-remove." + std::to_string(::getpid()) + "." + std::to_string(moved_serial++);
            auto rename = [&] { return ::renameat2(fd(), name, top_fd(), temp.c_str(), RENAME_NOREPLACE); };
            if (retry_without_flags(rename, fd(), name, top_fd()) == 0) {
                moved_.push_back(std::move(temp));
                return;
            }
            if (errno == ENOENT) return;  // gone meanwhile
            if (errno != EEXIST) break;   // EEXIST: the sandbox made that name; try another
        }
        note(sys_error("rename", at(name)));
    }

    std::vector<Frame> stack_;         // the top directory first, at most kMaxOpenDirs
    std::vector<std::string> moved_;   // names in the top directory still to remove
    std::string where_;                // path of the deepest open directory, for errors
    dev_t dev_;
    std::optional<Error> error_;
};

Status remove_once(const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) < 0) {
        if (errno == ENOENT) return {};
        return fail(sys_error("lstat", path));
    }
    // The top's parent lies outside the tree: its flags are left as they are.
    if (!S_ISDIR(st.st_mode)) {
        if (unlink_at(AT_FDCWD, path.c_str(), 0) < 0 && errno != ENOENT) return fail(sys_error("unlink", path));
        return {};
    }
    Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return {};
        return fail(sys_error("open", path));
    }
    if (::fstat(fd.get(), &st) < 0) return fail(sys_error("fstat", path));
    make_writable(fd.get(), st.st_mode);
    DirStream dir(::fdopendir(fd.get()));
    if (!dir) return fail(sys_error("opendir", path));
    fd.release();
    Status result = Remover(std::move(dir), st.st_dev, path).run();
    if (!result) return result;
    if (unlink_at(AT_FDCWD, path.c_str(), AT_REMOVEDIR) < 0 && errno != ENOENT) return fail(sys_error("rmdir", path));
    return {};
}

}  // namespace

Status remove_tree(const std::string& path) {
    // Another pass only when a directory was found not empty after all its entries went:
    // something was added meanwhile.
    Status result;
    for (int pass = 0; pass < 3; pass++) {
        result = remove_once(path);
        if (result || result.error().err != ENOTEMPTY) break;
    }
    return result;
}

}  // namespace dsec::fs
