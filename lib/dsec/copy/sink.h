// A copy is a stream of entries. A source (a directory walk, a tar reader) hands each
// entry to a Guard, which applies the rules every copy shares and passes it on to a
// Sink (a tar writer, a directory writer). Both ends of `dsec-run cp` are built from
// these pieces, so a rule holds whichever way the files move.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::copy {

/// What a copy carries. Devices, FIFOs and sockets are never carried: they are skipped.
enum class Kind { dir, file, symlink, hardlink };

/// One entry of the stream, in the order a tar holds them: a directory before what it
/// contains, a hard link after the file it names.
struct Entry {
    std::string path;   // clean and relative: "top/a/b", never "..", never absolute
    Kind kind = Kind::file;
    unsigned mode = 0;  // permission bits only (07777)
    uint32_t uid = 0;
    uint32_t gid = 0;
    int64_t mtime = 0;
    long mtime_ns = 0;
    uint64_t size = 0;   // file: exactly this many bytes follow through data()
    std::string target;  // symlink: its target, stored as is; hardlink: an earlier file's path
};

/// Where a stream goes. Nothing is final before commit(): until then abandon() takes
/// back what can be taken back.
class Sink {
public:
    virtual ~Sink() = default;
    /// Starts an entry; a file's bytes follow through data(), then end_file() (empty
    /// files too).
    virtual Status add(const Entry& e) = 0;
    /// The next `n` bytes of the current file.
    virtual Status data(const char* bytes, size_t n) = 0;
    /// The current file is complete.
    virtual Status end_file() = 0;
    /// The stream is complete and is to be kept. Errors: as for add().
    virtual Status commit() = 0;
    /// The copy failed: remove what it made, leave a tar stream without its end. Never fails.
    virtual void abandon() = 0;
};

/// Caps on what one copy moves.
struct Limits {
    uint64_t max_bytes = uint64_t(1) << 30;  // file contents, added up
    uint64_t max_entries = 100'000;          // every entry, skipped ones included
};

/// Things worth telling about a copy: the first kMaxListed with their paths, and how
/// many there were in all.
struct Notes {
    struct Note {
        std::string path;
        std::string what;
    };
    std::vector<Note> listed;
    uint64_t total = 0;
    static constexpr size_t kMaxListed = 100;

    void add(std::string path, std::string what);
    /// Adds another list's notes (its listed ones while there is room, all of its total).
    void merge(const Notes& other);
    /// [{"path","what"},...]
    nlohmann::json to_json() const;
    /// Reads a list written by to_json() with `total`; anything malformed is dropped.
    static Notes from_json(const nlohmann::json& listed, uint64_t total);
};

/// What a copy moved and what it left out or changed.
struct Stats {
    uint64_t entries = 0;  // entries written, the top one included
    uint64_t bytes = 0;    // file contents written
    Notes skipped;         // not copied: "character device", "fifo", "socket", ...
    Notes neutralized;     // copied, but changed: "setuid", "setgid", "sticky", "owner"

    /// Adds entries, bytes, skipped(_total) and neutralized(_total) to a record.
    void annotate(nlohmann::json& record) const;
    /// Reads what annotate() wrote; missing fields count as zero.
    static Stats from_record(const nlohmann::json& record);
};

}  // namespace dsec::copy
