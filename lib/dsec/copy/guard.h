// The rules every copy applies, in one place, between a source and a sink: paths are
// clean and relative, hard links only name files this same stream wrote, set-id bits
// are stripped, owners are kept or replaced, devices and FIFOs are skipped, and the
// byte and entry caps hold. A source may be hostile (a tar from a sandbox or from
// stdin): the guard trusts nothing it is given.
#pragma once

#include <set>
#include <string>

#include "dsec/copy/sink.h"

namespace dsec::copy {

/// How a guard treats what passes through it.
struct Policy {
    /// Mode bits removed from every entry, each one noted in Stats::neutralized.
    unsigned strip = 0;
    /// False: every entry is given the effective uid and gid of this process (a copy to
    /// the host belongs to whoever ran it).
    bool keep_owners = true;
    /// Non-empty: the first component of every path (and hard link target) is replaced
    /// with this name, so that the whole stream lands below one top.
    std::string top;
};

/// A Sink that checks, counts and rewrites entries before `next` sees them. Sources
/// report what they could not carry through skip().
class Guard : public Sink {
public:
    /// Passes what it accepts on to `next`, which must outlive it.
    Guard(Sink& next, Limits limits, Policy policy) : next_(next), limits_(limits), policy_(std::move(policy)) {}

    /// Errors: bad_input (an unclean path, a hard link to something the stream did not
    /// write, a symlink without a target, data past a file's size), too_large (a cap),
    /// and whatever `next` returns. A "./" entry (the destination itself) is dropped.
    Status add(const Entry& e) override;
    /// Errors: bad_input (more bytes than the file's size), and what `next` returns.
    Status data(const char* bytes, size_t n) override;
    /// Errors: bad_input (fewer bytes than the file's size), and what `next` returns.
    Status end_file() override;
    /// Passed on to `next`.
    Status commit() override { return next_.commit(); }
    void abandon() override { next_.abandon(); }

    /// Notes an entry left out (`what`: "fifo", "socket", ...); it still counts toward
    /// the entry cap. Errors: too_large.
    Status skip(const std::string& raw_path, const std::string& what);

    /// What has passed so far (entries and bytes passed on, notes).
    const Stats& stats() const { return stats_; }

private:
    Result<std::string> clean(const std::string& raw) const;
    Status count_entry(const std::string& path);

    Sink& next_;
    Limits limits_;
    Policy policy_;
    Stats stats_;
    uint64_t seen_ = 0;            // entries added or skipped: what the entry cap counts
    std::set<std::string> files_;  // regular files passed on: what hard links may name
    uint64_t file_left_ = 0;       // bytes still owed for the current file
    std::string file_path_;
};

/// How a skipped type is named: "character device", "block device", "fifo", "socket",
/// else "unknown type". Takes S_IFMT bits (libarchive's AE_IF* are the same values).
const char* special_name(unsigned mode);

/// The error for an exceeded cap (code too_large), naming the option that sets it.
Error too_large(const std::string& what, uint64_t cap, const char* option, const std::string& path);

}  // namespace dsec::copy
