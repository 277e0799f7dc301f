#include "dsec/layer/extract.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "dsec/sys/paths.h"

namespace dsec::layer {

namespace {
constexpr size_t kReadChunk = size_t(1) << 20;
constexpr const char* kWhiteoutPrefix = ".wh.";
constexpr const char* kOpaqueMarker = ".wh..wh..opq";
// An opaque directory carries the mark in both namespaces overlayfs reads: trusted.* for
// an overlay mounted by host root, user.* for one mounted inside a sandbox's user
// namespace (userxattr). Any other overlay attribute in an archive is dropped: a crafted
// one could redirect or hide what lies in other layers.
constexpr const char* kOpaqueXattr = "trusted.overlay.opaque";
constexpr const char* kUserOpaqueXattr = "user.overlay.opaque";

Status mark_opaque(int fd, const std::string& path) {
    for (const char* name : {kOpaqueXattr, kUserOpaqueXattr})
        if (::fsetxattr(fd, name, "y", 1, 0) < 0) return fail(sys_error(std::string("setxattr ") + name, path));
    return {};
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// A read buffer no larger than the input when the input is a file: a small archive
// does not need a megabyte allocated (and, under a sanitizer, poisoned) for it.
size_t read_chunk_for(int fd) {
    struct stat st;
    if (::fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) return kReadChunk;
    return std::clamp(size_t(st.st_size) + 1, size_t(4096), kReadChunk);
}

// libarchive pulls input through this, so we count (and hash) every byte it reads.
struct Reader {
    explicit Reader(Input* input) : in(input), size(read_chunk_for(input->fd)) {}
    Input* in;
    size_t size;
    std::unique_ptr<char[]> buf = std::make_unique_for_overwrite<char[]>(size);
    uint64_t total = 0;
    int err = 0;
};

la_ssize_t read_cb(struct archive*, void* data, const void** out) {
    auto* r = static_cast<Reader*>(data);
    ssize_t n;
    do n = ::read(r->in->fd, r->buf.get(), r->size);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        r->err = errno;
        return -1;
    }
    if (r->in->hash) r->in->hash->update(r->buf.get(), size_t(n));
    r->total += uint64_t(n);
    if (r->in->progress) r->in->progress(r->total);
    *out = r->buf.get();
    return n;
}

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;

// One archive being applied to one tree.
class Extractor {
public:
    Extractor(Input& in, SafeTree& tree, const ExtractOptions& opts, ExtractStats& stats)
        : in_(in), tree_(tree), opts_(opts), stats_(stats), reader_(&in) {}
    Status run();

private:
    Status entry(struct archive_entry* e, const std::string& path);
    Status whiteout(struct archive_entry* e, const std::string& path);
    Status hardlink(struct archive_entry* e, const std::string& path, int dirfd, const std::string& leaf);
    Status regular(struct archive_entry* e, const std::string& path, int dirfd, const std::string& leaf);
    Status set_meta(struct archive_entry* e, const std::string& path, int dirfd, const std::string& leaf, int fd);
    Status check_growth(uint64_t more, const std::string& path);
    Error archive_failure(const std::string& what);

    Input& in_;
    SafeTree& tree_;
    const ExtractOptions& opts_;
    ExtractStats& stats_;
    Reader reader_;
    ArchivePtr a_{nullptr, archive_read_free};
    uint64_t input_before_ = stats_.input_bytes;
    // Paths this archive wrote: OCI whiteouts only hide what lies in lower layers.
    std::set<std::string> written_;
};

Error Extractor::archive_failure(const std::string& what) {
    if (reader_.err) return errno_error(reader_.err, "read", in_.name);
    const char* msg = archive_error_string(a_.get());
    return bad_input(what + ": " + (msg ? msg : "unreadable archive"), in_.name);
}

Status Extractor::check_growth(uint64_t more, const std::string& path) {
    uint64_t out = stats_.bytes + more;
    if (out > opts_.limits.max_bytes)
        return fail(bad_input("archive expands past the size cap of " + std::to_string(opts_.limits.max_bytes) +
                            " bytes (--max-size)",
                        path));
    uint64_t read = input_before_ + reader_.total;
    if (out > ExtractLimits::kRatioFloor && out / ExtractLimits::kMaxRatio > read)
        return fail(bad_input("archive expands more than " + std::to_string(ExtractLimits::kMaxRatio) +
                            " times its compressed size: refusing a decompression bomb",
                        path));
    return {};
}

Status Extractor::run() {
    a_.reset(archive_read_new());
    if (!a_) return fail(make_error(Code::internal, "archive_read_new failed"));
    archive_read_support_filter_all(a_.get());
    archive_read_support_format_tar(a_.get());
    if (archive_read_open(a_.get(), &reader_, nullptr, read_cb, nullptr) != ARCHIVE_OK)
        return fail(archive_failure("cannot read the archive"));
    for (;;) {
        if (interrupted()) return fail(interrupted_error());
        struct archive_entry* e;
        int r = archive_read_next_header(a_.get(), &e);
        if (r == ARCHIVE_EOF) break;
        if (r < ARCHIVE_WARN) return fail(archive_failure("broken or truncated archive"));
        const char* raw = archive_entry_pathname(e);
        if (!raw) return fail(bad_input("entry without a path", in_.name));
        if (++stats_.entries > opts_.limits.max_entries)
            return fail(bad_input("more than " + std::to_string(opts_.limits.max_entries) + " entries", in_.name));
        auto path = clean_path(raw);
        if (!path) return fail(std::move(path.error()).context("in " + in_.name));
        if (auto s = entry(e, *path); !s) return fail(std::move(s.error()).context("entry \"" + *path + "\""));
    }
    stats_.input_bytes = input_before_ + reader_.total;
    return {};
}

Status Extractor::entry(struct archive_entry* e, const std::string& path) {
    if (path.empty()) {
        // "./": the tree's root itself; only its owner and mode matter.
        if (archive_entry_filetype(e) != AE_IFDIR || archive_entry_hardlink(e))
            return fail(bad_input("the archive's root entry is not a directory", in_.name));
        return set_meta(e, path, -1, {}, tree_.root_fd());
    }
    std::string leaf(leaf_of(path));
    if (opts_.oci && starts_with(leaf, kWhiteoutPrefix)) return whiteout(e, path);
    if (opts_.oci) written_.insert(path);

    auto dirfd = tree_.dir(parent_of(path));
    if (!dirfd) return fail(dirfd.error());
    unsigned type = archive_entry_hardlink(e) ? 0 : archive_entry_filetype(e);
    // A later entry replaces an earlier one (and, squashing, a lower layer's), except
    // that directories merge.
    if (unsigned old = SafeTree::type_at(*dirfd, leaf); old) {
        if (old == S_IFDIR && type == AE_IFDIR) return set_meta(e, path, *dirfd, leaf, -1);
        if (auto r = tree_.remove(*dirfd, leaf); !r) return fail(r.error());
        dirfd = tree_.dir(parent_of(path));
        if (!dirfd) return fail(dirfd.error());
    }
    if (archive_entry_hardlink(e)) return hardlink(e, path, *dirfd, leaf);

    switch (type) {
        case AE_IFREG: return regular(e, path, *dirfd, leaf);
        case AE_IFDIR:
            if (::mkdirat(*dirfd, leaf.c_str(), 0700) < 0) return fail(sys_error("mkdir", path));
            return set_meta(e, path, *dirfd, leaf, -1);
        case AE_IFLNK: {
            const char* target = archive_entry_symlink(e);
            if (!target || !*target) return fail(bad_input("symlink without a target", path));
            if (std::strlen(target) >= kMaxPath) return fail(bad_input("symlink target longer than 4095 bytes", path));
            // The target is kept as is: it is only ever resolved inside a sandbox's root.
            if (::symlinkat(target, *dirfd, leaf.c_str()) < 0) return fail(sys_error("symlink", path));
            return set_meta(e, path, *dirfd, leaf, -1);
        }
        case AE_IFCHR:
            // A 0/0 character device is an overlayfs whiteout, not a device: kept (and,
            // when squashing, applied).
            if (archive_entry_rdev(e) != 0) return fail(bad_input("device nodes are refused", path));
            if (opts_.squash) return {};
            if (::mknodat(*dirfd, leaf.c_str(), S_IFCHR | 0600, makedev(0, 0)) < 0)
                return fail(sys_error("mknod", path));
            return set_meta(e, path, *dirfd, leaf, -1);
        case AE_IFBLK: return fail(bad_input("device nodes are refused", path));
        case AE_IFIFO:
            if (::mkfifoat(*dirfd, leaf.c_str(), 0600) < 0) return fail(sys_error("mkfifo", path));
            return set_meta(e, path, *dirfd, leaf, -1);
        default: return fail(bad_input("unsupported entry type (socket or unknown)", path));
    }
}

Status Extractor::whiteout(struct archive_entry* e, const std::string& path) {
    std::string leaf(leaf_of(path));
    std::string dir(parent_of(path));
    if (leaf == kOpaqueMarker) {
        if (opts_.squash)  // Opaque: what lower layers put in this directory goes.
            return tree_.clear(dir, [&](const std::string& p) { return written_.count(p) > 0; });
        auto fd = tree_.dir(dir);
        if (!fd) return fail(fd.error());
        Fd d(::openat(*fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!d) return fail(sys_error("open", dir));
        if (auto r = mark_opaque(d.get(), dir); !r) return r;
        return {};
    }
    if (starts_with(leaf, ".wh..wh.")) return {};  // aufs bookkeeping, meaningless here
    std::string name = leaf.substr(4);
    if (name.empty() || name == "." || name == "..") return fail(bad_input("malformed whiteout", path));
    std::string target = dir.empty() ? name : dir + "/" + name;
    if (written_.count(target)) return {};  // the same layer's own file stays
    if (opts_.squash) {
        auto fd = tree_.open_existing(dir);
        if (!fd) return fail(fd.error());
        if (!*fd) return {};
        if (auto r = tree_.remove(fd->get(), name); !r) return fail(r.error());
        return {};
    }
    auto fd = tree_.dir(dir);
    if (!fd) return fail(fd.error());
    if (auto r = tree_.remove(*fd, name); !r) return fail(r.error());
    fd = tree_.dir(dir);
    if (!fd) return fail(fd.error());
    if (::mknodat(*fd, name.c_str(), S_IFCHR | 0600, makedev(0, 0)) < 0) return fail(sys_error("mknod", target));
    if (::fchownat(*fd, name.c_str(), archive_entry_uid(e), archive_entry_gid(e), AT_SYMLINK_NOFOLLOW) < 0)
        return fail(sys_error("chown", target));
    return {};
}

Status Extractor::hardlink(struct archive_entry* e, const std::string& path, int dirfd, const std::string& leaf) {
    auto target = clean_path(archive_entry_hardlink(e));
    if (!target) return fail(target.error());
    if (target->empty()) return fail(bad_input("hard link to the tree's root", path));
    auto tdir = tree_.open_existing(parent_of(*target));
    if (!tdir) return fail(tdir.error());
    std::string tleaf(leaf_of(*target));
    if (!*tdir || SafeTree::type_at(tdir->get(), tleaf) == 0)
        return fail(bad_input("hard link to an entry not (yet) in the archive: \"" + *target + "\"", path));
    if (::linkat(tdir->get(), tleaf.c_str(), dirfd, leaf.c_str(), 0) < 0) {
        if (errno == EPERM) return fail(bad_input("hard link to a directory", path));
        return fail(sys_error("link", path));
    }
    return {};
}

Status Extractor::regular(struct archive_entry* e, const std::string& path, int dirfd, const std::string& leaf) {
    int64_t size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
    if (size < 0) return fail(bad_input("negative file size", path));
    if (auto r = check_growth(uint64_t(size), path); !r) return r;
    Fd fd(::openat(dirfd, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return fail(sys_error("create", path));
    uint64_t end = 0;
    for (;;) {
        const void* buf;
        size_t len;
        la_int64_t off;
        int r = archive_read_data_block(a_.get(), &buf, &len, &off);
        if (r == ARCHIVE_EOF) break;
        if (r < ARCHIVE_WARN) return fail(archive_failure("broken or truncated archive"));
        if (off < 0 || uint64_t(off) + len > uint64_t(size)) return fail(bad_input("data past the file's declared size", path));
        const char* p = static_cast<const char*>(buf);
        while (len > 0) {
            ssize_t n = ::pwrite(fd.get(), p, len, off);
            if (n < 0) {
                if (errno == EINTR) continue;
                return fail(sys_error("write", tree_.root() + "/" + path));
            }
            p += n, off += n, len -= size_t(n);
        }
        end = std::max<uint64_t>(end, uint64_t(off));
        if (auto c = check_growth(end, path); !c) return c;
    }
    // Sparse files end in a hole that no block covers.
    if (end < uint64_t(size) && ::ftruncate(fd.get(), size) < 0)
        return fail(sys_error("truncate", tree_.root() + "/" + path));
    stats_.bytes += uint64_t(size);
    return set_meta(e, path, dirfd, leaf, fd.get());
}

// Owner, mode and the xattrs we accept. `fd` is the open entry when there is one.
Status Extractor::set_meta(struct archive_entry* e, const std::string& path, int dirfd, const std::string& leaf,
                           int fd) {
    unsigned type = archive_entry_filetype(e);
    uid_t uid = uid_t(archive_entry_uid(e));
    gid_t gid = gid_t(archive_entry_gid(e));
    mode_t mode = archive_entry_perm(e) & 07777;
    if (type == AE_IFREG && (mode & 06000)) {
        // Set-id programs would let a sandboxed user become another one: stripped.
        if (mode & S_ISUID) stats_.note(path, "setuid");
        if (mode & S_ISGID) stats_.note(path, "setgid");
        mode &= ~mode_t(06000);
    }
    if (fd >= 0) {
        if (::fchown(fd, uid, gid) < 0) return fail(sys_error("chown", path));
        if (::fchmod(fd, mode) < 0) return fail(sys_error("chmod", path));
    } else {
        if (::fchownat(dirfd, leaf.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) < 0) return fail(sys_error("chown", path));
        if (type != AE_IFLNK && ::fchmodat(dirfd, leaf.c_str(), mode, 0) < 0) return fail(sys_error("chmod", path));
    }
    struct timespec mtime = {0, 0};
    if (archive_entry_mtime_is_set(e)) mtime = {archive_entry_mtime(e), archive_entry_mtime_nsec(e)};
    if (type == AE_IFDIR) {
        stats_.dir_times[path] = mtime;
    } else {
        struct timespec times[2] = {mtime, mtime};
        int r = fd >= 0 ? ::futimens(fd, times) : ::utimensat(dirfd, leaf.c_str(), times, AT_SYMLINK_NOFOLLOW);
        if (r < 0) return fail(sys_error("utimensat", path));
    }
    if (archive_entry_xattr_reset(e) == 0) return {};
    Fd own;
    const char* name;
    const void* value;
    size_t size;
    while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK) {
        std::string n = name ? name : "";
        bool opaque = (n == kOpaqueXattr || n == kUserOpaqueXattr) && type == AE_IFDIR && size == 1 &&
                      *static_cast<const char*>(value) == 'y';
        bool user = starts_with(n, "user.") && !starts_with(n, "user.overlay.") && (type == AE_IFREG || type == AE_IFDIR);
        if (!opaque && !user) {
            // Capabilities, security labels and other overlay attributes are not taken
            // from archives.
            stats_.note(path, "xattr:" + n);
            continue;
        }
        if (fd < 0 && !own) {
            own.reset(::openat(dirfd, leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
            if (!own) return fail(sys_error("open", path));
        }
        if (opaque) {
            if (auto r = mark_opaque(fd >= 0 ? fd : own.get(), path); !r) return r;
            continue;
        }
        if (::fsetxattr(fd >= 0 ? fd : own.get(), n.c_str(), value, size, 0) < 0)
            return fail(sys_error("setxattr " + n, path));
    }
    return {};
}
}  // namespace

void ExtractStats::note(const std::string& path, const std::string& what) {
    neutralized_total++;
    if (neutralized.size() < kMaxListed) neutralized.push_back({path, what});
}

void ExtractStats::annotate(nlohmann::json& record) const {
    auto list = nlohmann::json::array();
    for (auto& n : neutralized) list.push_back({{"path", n.path}, {"what", n.what}});
    record["neutralized"] = list;
    record["neutralized_total"] = neutralized_total;
}

namespace {
thread_local const ExtractStats* settling;
thread_local size_t settling_root;
thread_local int settle_errno;

int settle_one(const char* path, const struct stat* st, int flag, struct FTW*) {
    if (flag != FTW_D && flag != FTW_DP) {
        // Whiteouts made for OCI markers, and anything else the archive did not time.
        if (S_ISCHR(st->st_mode) && st->st_rdev == 0 && (st->st_mtim.tv_sec || st->st_mtim.tv_nsec)) {
            struct timespec zero[2] = {{0, 0}, {0, 0}};
            if (::utimensat(AT_FDCWD, path, zero, AT_SYMLINK_NOFOLLOW) < 0) settle_errno = errno;
        }
        return 0;
    }
    std::string_view rel(path);
    rel.remove_prefix(std::min(rel.size(), settling_root));
    if (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
    auto it = settling->dir_times.find(std::string(rel));
    struct timespec t = it != settling->dir_times.end() ? it->second : timespec{0, 0};
    struct timespec times[2] = {t, t};
    if (::utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) < 0) settle_errno = errno;
    return 0;
}

// Every directory gets the archive's time, or 0: entries written below a directory (by
// this archive or a later layer squashed onto it) changed its mtime to the present.
Status settle_dir_times(const SafeTree& tree, const ExtractStats& stats) {
    settling = &stats;
    settling_root = tree.root().size();
    settle_errno = 0;
    // Depth first: a directory's time is set after everything below it is done.
    if (::nftw(tree.root().c_str(), settle_one, 64, FTW_PHYS | FTW_DEPTH) < 0) return fail(sys_error("walk", tree.root()));
    if (settle_errno) return fail(errno_error(settle_errno, "utimensat", tree.root()));
    return {};
}
}  // namespace

Status extract(Input& in, SafeTree& tree, const ExtractOptions& opts, ExtractStats& stats) {
    Extractor x(in, tree, opts, stats);
    if (auto r = x.run(); !r) return r;
    return settle_dir_times(tree, stats);
}

}  // namespace dsec::layer
