// Filesystem helpers every tool needs: atomic writes, whole-file reads, directory
// creation and removal, and flock-based locks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::fs {

/// Writes `data` to `path` atomically: a temp file beside it, fsync, rename, fsync of
/// the directory. Readers see the old content or the new one, never a mix.
/// On error the temp file is removed and `path` is untouched.
Status atomic_write(const std::string& path, std::string_view data, unsigned mode = 0644);

/// Writes `data` to `path` unless a file is there already, which stays as it is: for
/// caches whose content every writer makes the same, and whose file others may be
/// linking meanwhile (a rename over it would leave their inode without a name). The file
/// appears whole or not at all, and a writer killed half-way leaves nothing behind (an
/// O_TMPFILE inode, linked in when complete; a named temporary only on a filesystem
/// without O_TMPFILE). Returns whether this call made it. Errors: the failing call.
Result<bool> write_once(const std::string& path, std::string_view data, unsigned mode = 0644);

/// Reads a whole (small) file. Errors: not_found, io.
Result<std::string> read_file(const std::string& path);

/// Writes `value` to the existing file `path` with one write(), as a kernel control file
/// (cgroup, sysfs, /proc/sys) takes it: opened O_WRONLY | O_TRUNC, never created (the
/// truncation is the shell's `>`: control files ignore it, a plain file needs it).
/// Errors: the open's (not_found when it is missing) or the write's errno, with the value
/// in the error's context; a short write is io.
Status write_text(const std::string& path, std::string_view value);

/// Writes all of `data` to `fd`, retrying short writes and EINTR.
Status write_all(int fd, std::string_view data, const std::string& what = {});

/// Creates `path` and its missing parents with `mode`. Existing directories are fine.
Status mkdir_p(const std::string& path, unsigned mode = 0755);

/// Removes `path` and everything below it without following symlinks and without
/// crossing into other mounts (a mount point inside is an error with EBUSY, and what is
/// mounted there stays). Any depth, with a bounded number of descriptors and no
/// recursion; immutable and append-only flags in the tree are cleared (as root), and
/// directories without owner rwx are chmod'ed. Entries vanishing meanwhile are fine, and
/// so is a missing path. Errors carry op, path and errno of the first failure; the walk
/// goes on past it and removes what it can.
Status remove_tree(const std::string& path);

/// Names in a directory (no "." or ".."), sorted. A missing directory gives an empty list.
Result<std::vector<std::string>> list_dir(const std::string& path);

/// Names in the directory open as `dirfd` (any fd of it, O_PATH included; no "." or
/// ".."), sorted. `where` names it in errors. Errors: io.
Result<std::vector<std::string>> list_dir_at(int dirfd, const std::string& where);

/// True when `path` exists (lstat succeeds).
bool exists(const std::string& path);

/// fsyncs a directory so a rename inside it is durable.
Status sync_dir(const std::string& path);

/// rename(2), again while a network filesystem answers ESTALE (a directory another node
/// replaced meanwhile, as mkdir_p and TempDir::make retry). Errors: the rename's, naming `to`.
Status rename(const std::string& from, const std::string& to);

/// The directory part of a path ("a/b/c" -> "a/b"; "c" -> ".").
std::string dirname(const std::string& path);

/// A held flock. Released (and the fd closed) on destruction.
class Lock {
public:
    Lock() = default;
    explicit Lock(Fd fd) : fd_(std::move(fd)) {}
    bool held() const { return bool(fd_); }

private:
    Fd fd_;
};

enum class LockMode { shared, exclusive };

/// Opens (creating if needed) `path` and takes a flock on it, waiting for it.
/// On a read-only filesystem an existing lock file is opened read-only (flock still works).
Result<Lock> lock(const std::string& path, LockMode mode = LockMode::exclusive);

/// Like lock(), but returns an error with code "busy" instead of waiting.
Result<Lock> try_lock(const std::string& path, LockMode mode = LockMode::exclusive);

/// Takes a flock on a directory itself (no lock file). `wait` false: busy if held.
Result<Lock> lock_dir(const std::string& path, bool wait = true);

/// A directory made with mkdtemp and removed with everything in it on destruction,
/// unless keep() was called.
class TempDir {
public:
    /// Creates `parent/prefixXXXXXX`.
    static Result<TempDir> make(const std::string& parent, const std::string& prefix);
    TempDir(TempDir&& other) noexcept;
    TempDir& operator=(TempDir&&) = delete;
    ~TempDir();
    const std::string& path() const { return path_; }
    void keep() { path_.clear(); }

private:
    explicit TempDir(std::string path) : path_(std::move(path)) {}
    std::string path_;
};

}  // namespace dsec::fs
