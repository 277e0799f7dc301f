#include "dsec/sandbox/cp.h"

#include "dsec/copy/disk.h"
#include "dsec/copy/place.h"
#include "dsec/copy/tar.h"
#include "dsec/copy/walk.h"
#include "dsec/sandbox/cp_child.h"

namespace dsec::sandbox {

namespace {
// Mode bits a copy never carries: into a sandbox set-id bits (a program that makes a
// sandboxed user someone else); out of one the sticky bit too (the host's files are
// plain files of the caller's).
constexpr unsigned kStripIn = 06000;
constexpr unsigned kStripOut = 07000;

copy::Root jail(int root_fd, const std::string& id) { return {root_fd, true, id + ":"}; }

// Inside: `src` as a tar stream on `data_fd`, named `top`. The child keeps owners and
// modes as they are: the host's guard decides what to keep.
Result<copy::Stats> produce_inside(int root_fd, const std::string& id, const std::string& src, const std::string& top,
                                   int data_fd, const copy::Limits& limits) {
    auto from = copy::source(jail(root_fd, id), src);
    if (!from) return fail(from.error());
    copy::TarWriter tar(data_fd, "the pipe to dsec-run");
    copy::Guard guard(tar, limits, {0, true, ""});
    if (auto r = copy::walk(*from, top, guard); !r) return fail(r.error());
    if (auto r = guard.commit(); !r) return fail(r.error());
    return guard.stats();
}

// Inside: the tar stream on `data_fd` written below `dir`, each path's first component
// renamed to `top` (unless empty); kept only once the host says its side completed.
Result<copy::Stats> extract_inside(Fd dir, const std::string& where, const std::string& top, int data_fd,
                                   int verdict_fd, const copy::Limits& limits) {
    copy::DiskWriter disk(std::move(dir), where, true);
    copy::Guard guard(disk, limits, {kStripIn, true, top});
    Status r = copy::read_tar(data_fd, "the tar stream from dsec-run", guard);
    if (r && !host_completed(verdict_fd))
        r = fail(make_error(Code::aborted, "the host side of the copy failed; nothing was kept", where));
    if (r) r = guard.commit();
    if (!r) {
        guard.abandon();
        return fail(r.error());
    }
    copy::Stats s = guard.stats();
    s.neutralized.merge(disk.notes());
    return s;
}

// Host: what `feed` gives, as a tar stream on `data_fd`; its skipped entries go to `skipped`.
Status produce_here(int data_fd, const copy::Limits& limits, copy::Notes& skipped,
                    const std::function<Status(copy::Guard&)>& feed) {
    copy::TarWriter tar(data_fd, "the pipe into the sandbox");
    copy::Guard guard(tar, limits, {0, true, ""});
    auto r = feed(guard);
    if (r) r = guard.commit();
    skipped = guard.stats().skipped;
    return r;
}

// Host: the sandbox's stream on `sink` (a directory or a tar), checked by a guard that
// trusts nothing in it; `sink` is kept only when both sides succeed.
Result<copy::Stats> take_out(const Paths& paths, const std::string& id, const std::string& src,
                             const std::string& top, copy::Sink& sink, const copy::Limits& limits) {
    copy::Guard guard(sink, limits, {kStripOut, false, top});
    auto theirs = run_copy(
        paths, id, Flow::out_of_sandbox,
        [&](int root_fd, int data_fd, int) { return produce_inside(root_fd, id, src, top, data_fd, limits); },
        [&](int data_fd) { return copy::read_tar(data_fd, "the tar stream from the sandbox", guard); });
    Status r = theirs ? guard.commit() : Status(fail(theirs.error()));
    if (!r) {
        guard.abandon();
        return fail(r.error());
    }
    copy::Stats s = guard.stats();
    s.skipped.merge(theirs->skipped);
    return s;
}

// The child's stats with what the host's side skipped.
Result<copy::Stats> with_skipped(Result<copy::Stats> r, const copy::Notes& skipped) {
    if (r) r->skipped.merge(skipped);
    return r;
}
}  // namespace

Result<copy::Stats> copy_in(const Paths& paths, const std::string& id, const std::string& src, const std::string& dst,
                            const copy::Limits& limits) {
    auto from = copy::source({}, src);
    if (!from) return fail(from.error());
    // "/" has no name of its own: it can only become a `dst` that does not exist yet.
    std::string name = from->name == "." ? "" : from->name;
    copy::Notes skipped;
    auto r = run_copy(
        paths, id, Flow::into_sandbox,
        [&](int root_fd, int data_fd, int verdict_fd) -> Result<copy::Stats> {
            auto to = copy::landing(jail(root_fd, id), dst, name, true);
            if (!to) return fail(to.error());
            std::string top = to->name, where = to->dir_path;
            return extract_inside(std::move(to->dir), where, top, data_fd, verdict_fd, limits);
        },
        [&](int data_fd) {
            return produce_here(data_fd, limits, skipped,
                                [&](copy::Guard& g) { return copy::walk(*from, name.empty() ? "root" : name, g); });
        });
    return with_skipped(std::move(r), skipped);
}

Result<copy::Stats> copy_in_tar(const Paths& paths, const std::string& id, int tar_fd, const std::string& dst,
                                const copy::Limits& limits) {
    copy::Notes skipped;
    auto r = run_copy(
        paths, id, Flow::into_sandbox,
        [&](int root_fd, int data_fd, int verdict_fd) -> Result<copy::Stats> {
            auto dir = copy::landing_dir(jail(root_fd, id), dst);
            if (!dir) return fail(dir.error());
            return extract_inside(std::move(*dir), id + ":" + dst, "", data_fd, verdict_fd, limits);
        },
        [&](int data_fd) {
            return produce_here(data_fd, limits, skipped,
                                [&](copy::Guard& g) { return copy::read_tar(tar_fd, "standard input", g); });
        });
    return with_skipped(std::move(r), skipped);
}

Result<copy::Stats> copy_out(const Paths& paths, const std::string& id, const std::string& src,
                             const std::string& dst, const copy::Limits& limits) {
    auto to = copy::landing({}, dst, copy::basename_of(src), false);
    if (!to) return fail(to.error());
    std::string top = to->name, where = to->dir_path;
    copy::DiskWriter disk(std::move(to->dir), where, false);
    return take_out(paths, id, src, top, disk, limits);
}

Result<copy::Stats> copy_out_tar(const Paths& paths, const std::string& id, const std::string& src, int tar_fd,
                                 const copy::Limits& limits) {
    std::string top = copy::basename_of(src);
    if (!copy::plain_name(top))
        return fail(make_error(Code::bad_input, "a tar stream needs a source with a name (not / . or ..)", id + ":" + src));
    copy::TarWriter tar(tar_fd, "standard output");
    return take_out(paths, id, src, top, tar, limits);
}

}  // namespace dsec::sandbox
