// Writing a copy stream into a directory that someone else may be changing at the same
// time (a sandbox racing symlinks against a copy into it). Every parent is opened with
// openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) relative to the
// destination's fd (layer::SafeTree), every leaf is created relative to its parent's fd
// with O_EXCL | O_NOFOLLOW (what stood there before is unlinked first, never opened),
// and metadata is set through an fd of the entry itself: a symlink put anywhere on the
// way makes the copy fail, never write elsewhere.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dsec/copy/sink.h"
#include "dsec/layer/safe_tree.h"

namespace dsec::copy {

/// A Sink that creates the entries below a directory. Directories get their mode and
/// times at commit(), once nothing more is written into them; abandon() removes what
/// this copy created (what it replaced stays gone).
class DiskWriter : public Sink {
public:
    /// Entries land below the directory open as `dir` (`name` says where it is in
    /// messages). `set_owners`: chown to the entries' owners; an owner this process
    /// cannot give (EPERM, or EINVAL for an id its user namespace does not map) is then
    /// left as it is and noted as "owner".
    DiskWriter(Fd dir, std::string name, bool set_owners);

    /// Errors: bad_input (a symlink or non-directory in the way, a directory that would
    /// be replaced by a file), no_space, io.
    Status add(const Entry& e) override;
    /// Errors: no_space, io.
    Status data(const char* bytes, size_t n) override;
    /// Sets the file's owner, mode and times. Errors: io.
    Status end_file() override;
    /// Sets the directories' owners, modes and times. Errors: bad_input (a directory
    /// that is gone or turned into something else meanwhile), io.
    Status commit() override;
    void abandon() override;

    /// What was changed on the way in ("owner").
    const Notes& notes() const { return notes_; }

private:
    Status create(const Entry& e, int dirfd, const std::string& leaf);
    Status set_meta(int fd, const Entry& e);
    Status chown_or_note(int rc, const Entry& e);

    layer::SafeTree tree_;
    bool set_owners_;
    Fd file_;
    Entry current_;               // the file being written
    std::vector<Entry> dirs_;     // directories whose mode and times wait for commit()
    std::vector<std::string> made_;  // paths created, in order
    std::map<std::string, bool> tops_;  // first components seen: did each exist before?
    Notes notes_;
};

}  // namespace dsec::copy
