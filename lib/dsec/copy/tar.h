// Copy streams as tar (libarchive): a reader that turns a tar into entries for a Guard,
// and a Sink that writes entries as a pax tar. They carry a copy across the pipe
// between dsec-run and its child inside a sandbox, and in from stdin / out to stdout.
#pragma once

#include <memory>
#include <string>

#include "dsec/copy/guard.h"

struct archive;

namespace dsec::copy {

/// Feeds every entry of the tar on `fd` to `guard` (`name` says where it comes from in
/// messages). Regular files, directories, symlinks and hard links pass; devices, FIFOs
/// and sockets are skipped. Only uncompressed tar is read.
/// Errors: bad_input (not a tar, a broken or truncated one, a name or owner it cannot
/// carry), io (reading `fd`), and what the guard says.
Status read_tar(int fd, const std::string& name, Guard& guard);

/// Writes entries to `fd` as a pax tar with numeric owners. commit() writes the end of
/// the archive; abandon() stops without it, so that a reader can tell a cut stream
/// (libarchive itself accepts a tar without its end).
class TarWriter : public Sink {
public:
    /// `name` says where the stream goes in messages.
    TarWriter(int fd, std::string name);
    ~TarWriter() override;

    /// Errors: io (EPIPE when the reader went away), bad_input (an entry tar cannot hold).
    Status add(const Entry& e) override;
    Status data(const char* bytes, size_t n) override;
    Status end_file() override { return {}; }
    /// Writes the end of the archive. Errors: io.
    Status commit() override;
    /// Nothing more reaches `fd`, not even the end of the archive.
    void abandon() override { out_.dead = true; }

    /// Where libarchive's output goes (its write callback's state).
    struct Out {
        int fd;
        bool dead = false;  // once abandoned, nothing more reaches fd (not even the end)
        int err = 0;        // errno of the failed write
    };

private:
    Error failure(const std::string& path) const;

    Out out_;
    std::string name_;
    struct archive* a_;
    bool open_ = false;
    bool committed_ = false;
};

}  // namespace dsec::copy
