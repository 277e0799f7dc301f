#include "dsec/sandbox/cp.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "dsec/cgroup/cgroup.h"
#include "dsec/ns/join.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/security.h"

namespace dsec::sandbox {

namespace {
using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;

Error archive_error(struct archive* a, const std::string& op, const std::string& path) {
    const char* msg = archive_error_string(a);
    Error e = errno_error(archive_errno(a) > 0 ? archive_errno(a) : EIO, op, path);
    if (msg) e.message = msg;
    return e;
}

std::string basename_of(std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    auto slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Where a copy lands: inside `dst` when it is a directory, else as `dst`.
std::pair<std::string, std::string> resolve_dest(const std::string& dst, const std::string& src) {
    struct stat st;
    if (::stat(dst.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return {dst, basename_of(src)};
    std::string name = basename_of(dst);
    return {fs::dirname(dst), name};
}

// Writes `src` (recursively, symlinks as symlinks) as a pax tar to `fd`, each entry
// renamed below `top`.
Result<CopyStats> write_tar(int fd, const std::string& src, const std::string& top) {
    CopyStats stats;
    ArchivePtr out(archive_write_new(), archive_write_free);
    archive_write_set_format_pax_restricted(out.get());
    if (archive_write_open_fd(out.get(), fd) != ARCHIVE_OK) return fail(archive_error(out.get(), "tar open", src));
    ArchivePtr disk(archive_read_disk_new(), archive_read_free);
    archive_read_disk_set_symlink_physical(disk.get());
    archive_read_disk_set_standard_lookup(disk.get());
    if (archive_read_disk_open(disk.get(), src.c_str()) != ARCHIVE_OK) return fail(archive_error(disk.get(), "open", src));
    std::string prefix = src;
    for (;;) {
        struct archive_entry* entry = archive_entry_new();
        int r = archive_read_next_header2(disk.get(), entry);
        if (r == ARCHIVE_EOF) {
            archive_entry_free(entry);
            break;
        }
        if (r < ARCHIVE_WARN) {
            archive_entry_free(entry);
            return fail(archive_error(disk.get(), "read", src));
        }
        archive_read_disk_descend(disk.get());
        std::string path = archive_entry_pathname(entry);
        auto rename = [&](const std::string& p) { return top + p.substr(std::min(p.size(), prefix.size())); };
        archive_entry_set_pathname(entry, rename(path).c_str());
        if (const char* link = archive_entry_hardlink(entry)) archive_entry_set_hardlink(entry, rename(link).c_str());
        if (archive_write_header(out.get(), entry) < ARCHIVE_WARN) {
            archive_entry_free(entry);
            return fail(archive_error(out.get(), "tar write", path));
        }
        stats.entries++;
        if (archive_entry_filetype(entry) == AE_IFREG && archive_entry_size(entry) > 0) {
            Fd in(::open(archive_entry_sourcepath(entry), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
            if (!in) {
                archive_entry_free(entry);
                return fail(sys_error("open", path));
            }
            char buf[65536];
            ssize_t n;
            while ((n = ::read(in.get(), buf, sizeof buf)) > 0) {
                if (archive_write_data(out.get(), buf, size_t(n)) < 0) {
                    archive_entry_free(entry);
                    return fail(archive_error(out.get(), "tar write", path));
                }
                stats.bytes += uint64_t(n);
            }
        }
        archive_entry_free(entry);
    }
    if (archive_write_close(out.get()) != ARCHIVE_OK) return fail(archive_error(out.get(), "tar close", src));
    return stats;
}

// Extracts a tar from `fd` below `dir`, refusing "..", absolute paths and symlinks
// on the way, and keeping modes, owners and times.
// Replaces the first component of `path` with `top`.
std::string retop(const std::string& path, const std::string& top) {
    auto slash = path.find('/');
    return top + (slash == std::string::npos ? "" : path.substr(slash));
}

Result<CopyStats> extract_tar(int fd, const std::string& dir, const std::string& top) {
    CopyStats stats;
    Fd dirfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dirfd || ::fchdir(dirfd.get()) < 0) return fail(sys_error("open", dir));
    ArchivePtr in(archive_read_new(), archive_read_free);
    archive_read_support_format_tar(in.get());
    if (archive_read_open_fd(in.get(), fd, 65536) != ARCHIVE_OK) return fail(archive_error(in.get(), "tar open", dir));
    ArchivePtr disk(archive_write_disk_new(), archive_write_free);
    archive_write_disk_set_options(disk.get(), ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                   ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS | ARCHIVE_EXTRACT_PERM |
                                                   ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_TIME |
                                                   ARCHIVE_EXTRACT_UNLINK);
    for (;;) {
        struct archive_entry* entry;
        int r = archive_read_next_header(in.get(), &entry);
        if (r == ARCHIVE_EOF) break;
        if (r < ARCHIVE_WARN) return fail(archive_error(in.get(), "tar read", dir));
        std::string name = retop(archive_entry_pathname(entry), top);
        archive_entry_set_pathname(entry, name.c_str());
        if (const char* link = archive_entry_hardlink(entry)) archive_entry_set_hardlink(entry, retop(link, top).c_str());
        if (archive_write_header(disk.get(), entry) < ARCHIVE_WARN) return fail(archive_error(disk.get(), "extract", name));
        stats.entries++;
        const void* buf;
        size_t size;
        la_int64_t offset;
        while ((r = archive_read_data_block(in.get(), &buf, &size, &offset)) == ARCHIVE_OK) {
            if (archive_write_data_block(disk.get(), buf, size, offset) < ARCHIVE_WARN)
                return fail(archive_error(disk.get(), "extract", name));
            stats.bytes += size;
        }
        if (r < ARCHIVE_WARN) return fail(archive_error(in.get(), "tar read", name));
        if (archive_write_finish_entry(disk.get()) < ARCHIVE_WARN) return fail(archive_error(disk.get(), "extract", name));
    }
    if (archive_write_close(disk.get()) != ARCHIVE_OK) return fail(archive_error(disk.get(), "extract", dir));
    return stats;
}

// Runs `inside` in a child within the sandbox's mount namespace and cgroups while this
// process runs `outside`; they share one pipe. The child's error comes back as text.
Result<CopyStats> with_sandbox(const Paths& paths, const std::string& id, bool child_writes,
                               const std::function<Result<CopyStats>(int)>& inside,
                               const std::function<Result<CopyStats>(int)>& outside) {
    if (auto r = check_id(id); !r) return fail(r.error());
    auto state = load(paths, id);
    if (!state) return fail(state.error());
    auto layout = cgroup::detect();
    if (!layout) return fail(layout.error());
    cgroup::Cgroup cg(*layout, paths.cgroup_parent(), id);
    auto security = security_from_state(*state);
    if (!security) return fail(security.error());
    // The copy inside runs as root of the sandbox, held like any command of it.
    auto confinement = confinement_for(paths, id, *security, 0, 0);
    if (!confinement) return fail(confinement.error());
    ns::JoinSpec spec{state->value("pid", 0), state->value("pid_start", 0ULL), cg.procs_files(), CLONE_NEWNS,
                      security->userns, {}};
    int data[2], errp[2];
    if (::pipe2(data, O_CLOEXEC) < 0 || ::pipe2(errp, O_CLOEXEC) < 0) return fail(sys_error("pipe2"));
    Fd data_r(data[0]), data_w(data[1]), err_r(errp[0]), err_w(errp[1]);
    int child_end = child_writes ? data_w.get() : data_r.get();
    spec.keep_fds = {child_end, err_w.get()};
    auto child = ns::spawn_inside(spec, [&] {
        const char* op = "";
        if (dsec_confine(confinement->get(), &op) < 0) {
            std::string msg = std::string(op) + ": " + errno_name(errno);
            (void)!::write(err_w.get(), msg.data(), msg.size());
            ::_exit(1);
        }
        auto r = inside(child_end);
        if (!r) {
            std::string msg = r.error().describe();
            (void)!::write(err_w.get(), msg.data(), msg.size());
            ::_exit(1);
        }
        ::_exit(0);
    });
    if (!child) return fail(child.error());
    (child_writes ? data_w : data_r).reset();
    err_w.reset();
    auto result = outside(child_writes ? data_r.get() : data_w.get());
    data_r.reset();
    data_w.reset();
    int status = 0;
    while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
    }
    char buf[1024];
    ssize_t n = ::read(err_r.get(), buf, sizeof buf);
    if (n > 0) return fail(make_error("copy_failed", "inside the sandbox: " + std::string(buf, size_t(n)), id));
    if (!result) return fail(result.error());
    if (status != 0) return fail(make_error("copy_failed", "the copy inside the sandbox failed", id));
    return result;
}
}  // namespace

Result<CopyStats> copy_in(const Paths& paths, const std::string& id, const std::string& src, const std::string& dst) {
    struct stat st;
    if (::lstat(src.c_str(), &st) < 0) return fail(sys_error("stat", src));
    return with_sandbox(
        paths, id, false,
        [&](int fd) -> Result<CopyStats> {
            // Only the child sees dst, so it decides the top name.
            auto [dir, top] = resolve_dest(dst, src);
            return extract_tar(fd, dir, top);
        },
        [&](int fd) { return write_tar(fd, src, basename_of(src)); });
}

Result<CopyStats> copy_out(const Paths& paths, const std::string& id, const std::string& src, const std::string& dst) {
    auto [dir, top] = resolve_dest(dst, src);
    return with_sandbox(
        paths, id, true, [&](int fd) { return write_tar(fd, src, top); },
        [&](int fd) { return extract_tar(fd, dir, top); });
}

}  // namespace dsec::sandbox
