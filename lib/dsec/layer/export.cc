#include "dsec/layer/export.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>
#include <vector>

#include "dsec/sys/paths.h"
#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/loop.h"

namespace dsec::layer {

namespace {
constexpr size_t kChunk = size_t(1) << 20;

// A detached read-only mount of an EROFS image file; the returned fd is its root.
Result<Fd> mount_image(const std::string& image) {
    Fd fs(::fsopen("erofs", FSOPEN_CLOEXEC));
    if (!fs) return fail(sys_error("fsopen erofs"));
    if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "source", image.c_str(), 0) < 0)
        return fail(sys_error("fsconfig source", image));
    std::optional<sys::Loop> loop;
    if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0) {
        if (errno != ENOTBLK) return fail(sys_error("mount erofs", image));
        // A store on tmpfs: through a read-only loop device, which goes with the mount.
        Fd file(::open(image.c_str(), O_RDONLY | O_CLOEXEC));
        if (!file) return fail(sys_error("open", image));
        auto l = sys::attach_loop(file.get());
        if (!l) return fail(l.error());
        loop = std::move(*l);
        fs.reset(::fsopen("erofs", FSOPEN_CLOEXEC));
        if (!fs) return fail(sys_error("fsopen erofs"));
        if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "source", loop->path.c_str(), 0) < 0 ||
            ::fsconfig(fs.get(), FSCONFIG_SET_FLAG, "ro", nullptr, 0) < 0 ||
            ::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0)
            return fail(sys_error("mount erofs", loop->path).context("image " + image));
    }
    Fd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                                     MOUNT_ATTR_NOEXEC));
    if (!mnt) return fail(sys_error("fsmount", image));
    Fd root(::openat(mnt.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root) return fail(sys_error("open", image));
    return root;
}

using EntryPtr = std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)>;

class Exporter {
public:
    Exporter(struct archive* a) : a_(a), links_(archive_entry_linkresolver_new()) {
        archive_entry_linkresolver_set_strategy(links_, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
    }
    ~Exporter() { archive_entry_linkresolver_free(links_); }
    Status walk(int dirfd, const std::string& rel);
    Status one(int dirfd, const std::string& name, const std::string& path, const struct stat& st, int fd);

private:
    Error write_error(const std::string& path) {
        const char* m = archive_error_string(a_);
        int e = archive_errno(a_);
        Error err = e ? errno_error(e, "write", path) : make_error(Code::io, m ? m : "archive write failed", path);
        return err;
    }
    struct archive* a_;
    struct archive_entry_linkresolver* links_;
    std::vector<char> buf_ = std::vector<char>(kChunk);
};

Status add_xattrs(struct archive_entry* e, int fd, const std::string& path) {
    ssize_t len = ::flistxattr(fd, nullptr, 0);
    if (len < 0) return errno == ENOTSUP ? Status{} : fail(sys_error("listxattr", path));
    std::string names(size_t(len), '\0');
    len = ::flistxattr(fd, names.data(), names.size());
    if (len < 0) return fail(sys_error("listxattr", path));
    names.resize(size_t(len));
    std::vector<std::string> sorted;
    for (size_t i = 0; i < names.size();) {
        std::string n(names.c_str() + i);
        i += n.size() + 1;
        if (!n.empty()) sorted.push_back(n);
    }
    std::sort(sorted.begin(), sorted.end());
    for (auto& n : sorted) {
        ssize_t vl = ::fgetxattr(fd, n.c_str(), nullptr, 0);
        if (vl < 0) return fail(sys_error("getxattr " + n, path));
        std::string v(size_t(vl), '\0');
        vl = ::fgetxattr(fd, n.c_str(), v.data(), v.size());
        if (vl < 0) return fail(sys_error("getxattr " + n, path));
        archive_entry_xattr_add_entry(e, n.c_str(), v.data(), size_t(vl));
    }
    return {};
}

Status Exporter::one(int dirfd, const std::string& name, const std::string& path, const struct stat& st, int fd) {
    EntryPtr entry(archive_entry_new(), archive_entry_free);
    struct archive_entry* e = entry.get();
    archive_entry_set_pathname(e, path.c_str());
    archive_entry_set_mode(e, st.st_mode);
    archive_entry_set_uid(e, st.st_uid);
    archive_entry_set_gid(e, st.st_gid);
    archive_entry_set_mtime(e, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    archive_entry_set_dev(e, st.st_dev);
    archive_entry_set_ino(e, st.st_ino);
    archive_entry_set_nlink(e, st.st_nlink);
    if (S_ISREG(st.st_mode)) archive_entry_set_size(e, st.st_size);
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) archive_entry_set_rdev(e, st.st_rdev);
    if (S_ISLNK(st.st_mode)) {
        std::string target(size_t(st.st_size) + 1, '\0');
        ssize_t n = ::readlinkat(dirfd, name.c_str(), target.data(), target.size());
        if (n < 0) return fail(sys_error("readlink", path));
        target.resize(size_t(n));
        archive_entry_set_symlink(e, target.c_str());
    }
    if (fd >= 0)
        if (auto r = add_xattrs(e, fd, path); !r) return r;
    struct archive_entry* spare = nullptr;
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) archive_entry_linkify(links_, &e, &spare);
    if (archive_write_header(a_, e) < ARCHIVE_WARN) return fail(write_error(path));
    if (!S_ISREG(st.st_mode) || archive_entry_hardlink(e) || fd < 0) return {};
    for (off_t left = st.st_size; left > 0;) {
        ssize_t n = ::read(fd, buf_.data(), buf_.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(sys_error("read", path));
        if (n == 0) return fail(make_error(Code::io, "file shrank while being read", path));
        if (archive_write_data(a_, buf_.data(), size_t(n)) < 0) return fail(write_error(path));
        left -= n;
    }
    return {};
}

Status Exporter::walk(int dirfd, const std::string& rel) {
    auto names = fs::list_dir_at(dirfd, rel.empty() ? "." : rel);
    if (!names) return fail(names.error());
    for (auto& n : *names) {
        if (interrupted()) return fail(interrupted_error());
        std::string path = rel.empty() ? n : rel + "/" + n;
        struct stat st;
        if (::fstatat(dirfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) return fail(sys_error("stat", path));
        if (S_ISSOCK(st.st_mode)) continue;  // tar cannot hold a socket
        Fd fd;
        if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
            fd.reset(::openat(dirfd, n.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
            if (!fd) return fail(sys_error("open", path));
        }
        if (auto r = one(dirfd, n, path, st, fd.get()); !r) return r;
        if (S_ISDIR(st.st_mode))
            if (auto r = walk(fd.get(), path); !r) return r;
    }
    return {};
}
}  // namespace

Status export_image(const std::string& image, int out_fd, int level) {
    if (level < 1 || level > 22) return fail(make_error(Code::usage, "zstd level must be 1 to 22"));
    auto root = mount_image(image);
    if (!root) return fail(root.error());
    std::unique_ptr<struct archive, int (*)(struct archive*)> a(archive_write_new(), archive_write_free);
    if (!a) return fail(make_error(Code::internal, "archive_write_new failed"));
    // Full pax: mtimes keep their nanoseconds (restricted pax would round them to seconds).
    archive_write_set_format_pax(a.get());
    // SCHILY.xattr only: what GNU tar and libarchive both read.
    archive_write_set_format_option(a.get(), "pax", "xattrheader", "SCHILY");
    archive_write_add_filter_zstd(a.get());
    std::string lv = std::to_string(level);
    if (archive_write_set_filter_option(a.get(), "zstd", "compression-level", lv.c_str()) != ARCHIVE_OK)
        return fail(make_error(Code::usage, std::string("zstd level: ") + archive_error_string(a.get())));
    archive_write_set_bytes_per_block(a.get(), int(kChunk));
    archive_write_set_bytes_in_last_block(a.get(), 1);
    if (archive_write_open_fd(a.get(), out_fd) != ARCHIVE_OK)
        return fail(make_error(Code::io, archive_error_string(a.get())));
    Exporter x(a.get());
    struct stat st;
    if (::fstat(root->get(), &st) < 0) return fail(sys_error("stat", image));
    if (auto r = x.one(-1, ".", "./", st, root->get()); !r) return r;
    if (auto r = x.walk(root->get(), ""); !r) return r;
    if (archive_write_close(a.get()) != ARCHIVE_OK) {
        int e = archive_errno(a.get());
        return fail(e ? errno_error(e, "write", "export") : make_error(Code::io, archive_error_string(a.get())));
    }
    return {};
}

}  // namespace dsec::layer
