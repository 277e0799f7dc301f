#include "dsec/copy/tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "dsec/sys/paths.h"

namespace dsec::copy {

namespace {
constexpr size_t kBlock = size_t(1) << 16;

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;
using EntryPtr = std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)>;

// The read side of libarchive: our own callback, so that a failed read keeps its errno
// apart from a malformed archive.
struct In {
    int fd;
    int err = 0;
    // Not zeroed: read() fills what is used.
    std::unique_ptr<char[]> buf = std::make_unique_for_overwrite<char[]>(kBlock);
};

la_ssize_t read_cb(struct archive*, void* p, const void** out) {
    auto* in = static_cast<In*>(p);
    ssize_t n;
    do n = ::read(in->fd, in->buf.get(), kBlock);
    while (n < 0 && errno == EINTR);
    if (n < 0) in->err = errno;
    *out = in->buf.get();
    return n;
}

Error read_failure(struct archive* a, const In& in, const std::string& name) {
    if (in.err) return errno_error(in.err, "read", name);
    const char* msg = archive_error_string(a);
    return bad_input(std::string("not a readable tar stream: ") + (msg ? msg : "broken or truncated"), name);
}

// The entry libarchive read, as a copy Entry; false (with `skip` set) for what copies
// never carry.
Result<bool> to_entry(struct archive_entry* ae, Entry& e, const char*& skip) {
    const char* raw = archive_entry_pathname(ae);
    if (!raw) raw = archive_entry_pathname_utf8(ae);
    if (!raw) return fail(bad_input("an entry without a usable path", ""));
    e.path = raw;
    unsigned type = archive_entry_filetype(ae);
    if (const char* link = archive_entry_hardlink(ae)) {
        e.kind = Kind::hardlink;
        e.target = link;
    } else if (type == AE_IFREG) {
        e.kind = Kind::file;
        int64_t size = archive_entry_size_is_set(ae) ? archive_entry_size(ae) : 0;
        if (size < 0) return fail(bad_input("negative file size", e.path));
        e.size = uint64_t(size);
    } else if (type == AE_IFDIR) {
        e.kind = Kind::dir;
    } else if (type == AE_IFLNK) {
        e.kind = Kind::symlink;
        const char* target = archive_entry_symlink(ae);
        e.target = target ? target : "";
    } else {
        skip = special_name(type);
        return false;
    }
    // uid_t -1 would mean "leave the owner alone" to chown: not a real owner.
    int64_t uid = archive_entry_uid(ae), gid = archive_entry_gid(ae);
    if (uid < 0 || gid < 0 || uid >= 0xffffffffLL || gid >= 0xffffffffLL)
        return fail(bad_input("owner out of range (" + std::to_string(uid) + ":" + std::to_string(gid) + ")", e.path));
    e.uid = uint32_t(uid);
    e.gid = uint32_t(gid);
    e.mode = archive_entry_perm(ae) & 07777;
    e.mtime = archive_entry_mtime(ae);
    e.mtime_ns = archive_entry_mtime_nsec(ae);
    return true;
}
}  // namespace

Status read_tar(int fd, const std::string& name, Guard& guard) {
    ArchivePtr a(archive_read_new(), archive_read_free);
    if (!a) return fail(make_error(Code::internal, "archive_read_new failed"));
    archive_read_support_format_tar(a.get());
    In in{fd};
    if (archive_read_open(a.get(), &in, nullptr, read_cb, nullptr) != ARCHIVE_OK)
        return fail(read_failure(a.get(), in, name));
    auto buf = std::make_unique_for_overwrite<char[]>(kBlock);
    for (;;) {
        if (interrupted()) return fail(interrupted_error());
        struct archive_entry* ae;
        int r = archive_read_next_header(a.get(), &ae);
        if (r == ARCHIVE_EOF) return {};
        if (r < ARCHIVE_WARN) return fail(read_failure(a.get(), in, name));
        Entry e;
        const char* skip = nullptr;
        auto carried = to_entry(ae, e, skip);
        if (!carried) return fail(std::move(carried.error()).context("in " + name));
        if (!*carried) {
            if (auto s = guard.skip(e.path, skip); !s) return s;
            continue;
        }
        if (auto s = guard.add(e); !s) return s;
        if (e.kind != Kind::file) continue;
        // archive_read_data fills the holes of sparse entries with zeros: the guard sees
        // exactly the size the header declared.
        for (;;) {
            la_ssize_t n = archive_read_data(a.get(), buf.get(), kBlock);
            if (n < 0) return fail(read_failure(a.get(), in, name));
            if (n == 0) break;
            if (auto s = guard.data(buf.get(), size_t(n)); !s) return s;
        }
        if (auto s = guard.end_file(); !s) return s;
    }
}

namespace {
la_ssize_t write_cb(struct archive* a, void* p, const void* buf, size_t n) {
    auto* out = static_cast<TarWriter::Out*>(p);
    if (out->dead) return la_ssize_t(n);
    auto* c = static_cast<const char*>(buf);
    for (size_t left = n; left > 0;) {
        ssize_t w = ::write(out->fd, c, left);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            out->err = errno;
            archive_set_error(a, errno, "write");
            return -1;
        }
        c += w;
        left -= size_t(w);
    }
    return la_ssize_t(n);
}
}  // namespace

TarWriter::TarWriter(int fd, std::string name) : out_{fd}, name_(std::move(name)), a_(archive_write_new()) {
    if (!a_) return;
    archive_write_set_format_pax_restricted(a_);
    open_ = archive_write_open2(a_, &out_, nullptr, write_cb, nullptr, nullptr) == ARCHIVE_OK;
}

TarWriter::~TarWriter() {
    // Freeing closes the archive, which would write its end: not for an abandoned one.
    if (!a_) return;
    if (!committed_) out_.dead = true;
    archive_write_free(a_);
}

Error TarWriter::failure(const std::string& path) const {
    if (out_.err) return errno_error(out_.err, "write", name_);
    const char* msg = a_ ? archive_error_string(a_) : nullptr;
    return bad_input(std::string("cannot write the tar entry: ") + (msg ? msg : "libarchive failed"), path);
}

Status TarWriter::add(const Entry& e) {
    if (!open_) return fail(failure(e.path));
    EntryPtr ae(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(ae.get(), e.path.c_str());
    archive_entry_set_filetype(ae.get(), e.kind == Kind::dir ? AE_IFDIR : e.kind == Kind::symlink ? AE_IFLNK : AE_IFREG);
    archive_entry_set_perm(ae.get(), e.mode & 07777);
    archive_entry_set_uid(ae.get(), e.uid);
    archive_entry_set_gid(ae.get(), e.gid);
    archive_entry_set_mtime(ae.get(), e.mtime, e.mtime_ns);
    if (e.kind == Kind::file) archive_entry_set_size(ae.get(), int64_t(e.size));
    if (e.kind == Kind::symlink) archive_entry_set_symlink(ae.get(), e.target.c_str());
    if (e.kind == Kind::hardlink) {
        archive_entry_set_hardlink(ae.get(), e.target.c_str());
        archive_entry_set_size(ae.get(), 0);
    }
    if (archive_write_header(a_, ae.get()) < ARCHIVE_WARN) return fail(failure(e.path));
    return {};
}

Status TarWriter::data(const char* bytes, size_t n) {
    while (n > 0) {
        la_ssize_t w = archive_write_data(a_, bytes, n);
        if (w <= 0) return fail(failure(name_));
        bytes += w;
        n -= size_t(w);
    }
    return {};
}

Status TarWriter::commit() {
    if (!open_) return fail(failure(name_));
    if (archive_write_close(a_) != ARCHIVE_OK) return fail(failure(name_));
    committed_ = true;
    return {};
}

}  // namespace dsec::copy
