#include "dsec/copy/disk.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "dsec/sys/fs.h"

namespace dsec::copy {

namespace {
struct timespec time_of(const Entry& e) { return {time_t(e.mtime), e.mtime_ns}; }

std::string first_component(const std::string& path) { return path.substr(0, path.find('/')); }
}  // namespace

DiskWriter::DiskWriter(Fd dir, std::string name, bool set_owners)
    : tree_(layer::SafeTree::adopt(std::move(dir), std::move(name), true)), set_owners_(set_owners) {}

Status DiskWriter::chown_or_note(int rc, const Entry& e) {
    if (rc == 0) return {};
    if (errno != EPERM && errno != EINVAL) return fail(sys_error("chown", tree_.root() + "/" + e.path));
    notes_.add(e.path, "owner");
    return {};
}

// Owner, mode and times through `fd`, an fd of the entry itself (never a path).
Status DiskWriter::set_meta(int fd, const Entry& e) {
    if (set_owners_)
        if (auto r = chown_or_note(::fchown(fd, e.uid, e.gid), e); !r) return r;
    if (::fchmod(fd, e.mode & 07777) < 0) return fail(sys_error("chmod", tree_.root() + "/" + e.path));
    struct timespec ts[2] = {time_of(e), time_of(e)};
    if (::futimens(fd, ts) < 0) return fail(sys_error("utimes", tree_.root() + "/" + e.path));
    return {};
}

Status DiskWriter::add(const Entry& e) {
    std::string top = first_component(e.path);
    if (!tops_.count(top)) tops_[top] = layer::SafeTree::type_at(tree_.root_fd(), top) != 0;
    std::string parent(layer::parent_of(e.path)), leaf(layer::leaf_of(e.path));
    auto dirfd = tree_.dir(parent);
    if (!dirfd) return fail(dirfd.error());
    // What stands in the way: a directory merges with a directory and is never replaced;
    // anything else (a symlink included) is unlinked, not opened.
    if (unsigned old = layer::SafeTree::type_at(*dirfd, leaf); old) {
        if (old == S_IFDIR) {
            if (e.kind != Kind::dir) return fail(bad_input("a directory is in the way (a copy never replaces one)", e.path));
            dirs_.push_back(e);
            return {};
        }
        if (auto r = tree_.remove(*dirfd, leaf); !r) return fail(r.error());
        dirfd = tree_.dir(parent);
        if (!dirfd) return fail(dirfd.error());
    }
    return create(e, *dirfd, leaf);
}

Status DiskWriter::create(const Entry& e, int dirfd, const std::string& leaf) {
    std::string where = tree_.root() + "/" + e.path;
    switch (e.kind) {
        case Kind::dir:
            if (::mkdirat(dirfd, leaf.c_str(), 0700) < 0) return fail(sys_error("mkdir", where));
            made_.push_back(e.path);
            dirs_.push_back(e);
            return {};
        case Kind::file:
            file_.reset(::openat(dirfd, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
            if (!file_) return fail(sys_error("create", where));
            made_.push_back(e.path);
            current_ = e;
            return {};
        case Kind::symlink: {
            if (::symlinkat(e.target.c_str(), dirfd, leaf.c_str()) < 0) return fail(sys_error("symlink", where));
            made_.push_back(e.path);
            if (set_owners_)
                if (auto r = chown_or_note(::fchownat(dirfd, leaf.c_str(), e.uid, e.gid, AT_SYMLINK_NOFOLLOW), e); !r)
                    return r;
            struct timespec ts[2] = {time_of(e), time_of(e)};
            if (::utimensat(dirfd, leaf.c_str(), ts, AT_SYMLINK_NOFOLLOW) < 0) return fail(sys_error("utimes", where));
            return {};
        }
        case Kind::hardlink: {
            // The guard let only files of this same stream through as targets.
            auto tdir = tree_.open_existing(layer::parent_of(e.target));
            if (!tdir) return fail(tdir.error());
            if (!*tdir) return fail(bad_input("hard link target is gone: \"" + e.target + "\"", e.path));
            std::string tleaf(layer::leaf_of(e.target));
            if (::linkat(tdir->get(), tleaf.c_str(), dirfd, leaf.c_str(), 0) < 0) return fail(sys_error("link", where));
            made_.push_back(e.path);
            return {};
        }
    }
    return {};
}

Status DiskWriter::data(const char* bytes, size_t n) {
    return fs::write_all(file_.get(), std::string_view(bytes, n), tree_.root() + "/" + current_.path);
}

Status DiskWriter::end_file() {
    auto r = set_meta(file_.get(), current_);
    file_.reset();
    return r;
}

Status DiskWriter::commit() {
    // Deepest first: a directory's times change when something is made in it.
    for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
        auto parent = tree_.open_existing(layer::parent_of(it->path));
        if (!parent) return fail(parent.error());
        std::string leaf(layer::leaf_of(it->path));
        Fd d(*parent ? ::openat(parent->get(), leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1);
        if (!d) return fail(bad_input("the directory changed while it was copied into", tree_.root() + "/" + it->path));
        if (auto r = set_meta(d.get(), *it); !r) return r;
    }
    dirs_.clear();
    made_.clear();
    return {};
}

void DiskWriter::abandon() {
    file_.reset();
    // New top-level entries go whole (with parents made for entries that came without
    // one); inside ones that existed, what this copy made goes, newest first.
    for (auto& [top, existed] : tops_)
        if (!existed) (void)tree_.remove(tree_.root_fd(), top);
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
        auto parent = tree_.open_existing(layer::parent_of(*it));
        if (parent && *parent) (void)tree_.remove(parent->get(), std::string(layer::leaf_of(*it)));
    }
    made_.clear();
    dirs_.clear();
}

}  // namespace dsec::copy
