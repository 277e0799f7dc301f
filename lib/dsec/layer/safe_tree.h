// Writing into a staging tree without ever following a link. Every parent directory is
// resolved beneath the tree's root with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS),
// and every leaf is created relative to its parent's fd with O_EXCL / O_NOFOLLOW, so an
// archive entry `link -> /etc` followed by `link/passwd` fails instead of writing to /etc.
#pragma once

#include <string>
#include <string_view>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::layer {

/// Linux's limits on one name and one path, checked before any syscall sees them.
constexpr size_t kMaxName = 255;
constexpr size_t kMaxPath = 4096;

/// Normalizes an archive path: "./a//b/" -> "a/b", "./" -> "" (the root itself).
/// Errors: bad_input for absolute paths, ".." components, and names or paths too long.
Result<std::string> clean_path(std::string_view raw);

/// The last component of a clean, non-empty path ("a/b" -> "b").
std::string_view leaf_of(std::string_view path);
/// Everything before the last component ("a/b" -> "a", "b" -> "").
std::string_view parent_of(std::string_view path);

/// A directory tree being filled, addressed by clean relative paths.
class SafeTree {
public:
    /// Opens the existing directory `root`. Errors: io.
    static Result<SafeTree> open(const std::string& root);

    /// A tree rooted at the directory open as `root_fd` (O_PATH will do), called `name`
    /// in messages. `cross_mounts`: paths below may pass through mount points (a
    /// sandbox's /tmp under its /); open() never lets them.
    static SafeTree adopt(Fd root_fd, std::string name, bool cross_mounts);

    const std::string& root() const { return root_; }
    int root_fd() const { return root_fd_.get(); }

    /// The fd of `dir` (a clean path, "" for the root), creating missing directories
    /// (mode 0755, owner root) on the way. The fd stays valid until the next call.
    /// Errors: bad_input when a component is a symlink or not a directory.
    Result<int> dir(std::string_view dir);

    /// The fd (O_PATH) of the existing directory `dir`, without creating anything and
    /// without touching the cache; an empty Fd when it does not exist.
    /// Errors: bad_input when a component is a symlink or not a directory.
    Result<Fd> open_existing(std::string_view dir) const;

    /// Removes `name` in directory `dirfd` if it exists, with everything below it.
    /// Returns whether something was there. Invalidates fds returned by dir().
    /// Errors: io.
    Result<bool> remove(int dirfd, const std::string& name);

    /// Removes every entry of directory `dir` for which `keep(child_path)` is false.
    /// Errors: io.
    template <typename Keep>
    Status clear(const std::string& dir, Keep keep);

    /// The type bits (S_IFMT) of `name` in `dirfd`, or 0 when it does not exist.
    static unsigned type_at(int dirfd, const std::string& name);

private:
    SafeTree(std::string root, Fd fd, bool cross_mounts)
        : root_(std::move(root)), root_fd_(std::move(fd)), cross_mounts_(cross_mounts) {}
    long open_below(const std::string& path, uint64_t flags) const;
    Result<Fd> walk_creating(std::string_view dir);
    Status clear_impl(const std::string& dir, bool (*keep)(void*, const std::string&), void* ctx);

    std::string root_;
    Fd root_fd_;
    bool cross_mounts_ = false;
    // The last directory asked for: archives list siblings together, so this saves
    // nearly every lookup. Dropped whenever anything is removed.
    std::string cached_dir_;
    Fd cached_fd_;
};

template <typename Keep>
Status SafeTree::clear(const std::string& dir, Keep keep) {
    return clear_impl(
        dir, [](void* ctx, const std::string& p) { return (*static_cast<Keep*>(ctx))(p); }, &keep);
}

}  // namespace dsec::layer
