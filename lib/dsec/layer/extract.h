// Streaming a tar archive (any compression libarchive reads) into a staging tree, with
// hostile input in mind: no path leaves the tree, nothing is written through a link,
// device nodes are refused, setuid/setgid bits are stripped, and the total size, the
// entry count and the expansion ratio are capped. Memory stays bounded: data goes from
// libarchive's blocks straight into files.
#pragma once

#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/layer/safe_tree.h"
#include "dsec/sys/error.h"
#include "dsec/sys/sha256.h"

namespace dsec::layer {

/// Caps against decompression bombs and runaway archives.
struct ExtractLimits {
    uint64_t max_bytes = uint64_t(64) << 30;  // total extracted (apparent) file bytes
    uint64_t max_entries = 10'000'000;
    // Past kRatioFloor bytes out, more than kMaxRatio bytes out per byte in is a bomb.
    static constexpr uint64_t kRatioFloor = uint64_t(256) << 20;
    static constexpr uint64_t kMaxRatio = 1000;
};

struct ExtractOptions {
    bool oci = false;     // OCI layer: `.wh.NAME` files are whiteouts, `.wh..wh..opq` opaque dirs
    bool squash = false;  // apply whiteouts to what the tree already holds (delete) instead of recording them
    ExtractLimits limits;
};

/// Something in the archive that was changed rather than refused.
struct Neutralized {
    std::string path;
    std::string what;  // "setuid", "setgid", "xattr:NAME"
};

/// Running totals, carried across the layers of one image so that caps hold for the whole.
struct ExtractStats {
    uint64_t entries = 0;
    uint64_t bytes = 0;        // apparent size of the files written
    uint64_t input_bytes = 0;  // bytes read from the input (compressed)
    std::vector<Neutralized> neutralized;  // the first kMaxListed
    // Directories' mtimes as the archives gave them (clean path -> time): applied once a
    // whole archive is in, since every entry written below a directory changes its mtime.
    std::map<std::string, struct timespec> dir_times;
    uint64_t neutralized_total = 0;
    static constexpr size_t kMaxListed = 100;

    void note(const std::string& path, const std::string& what);
    /// Adds "neutralized" (list of {path, what}) and "neutralized_total" to a record.
    void annotate(nlohmann::json& record) const;
};

/// Where the archive comes from: an fd read in large chunks, optionally hashed (for
/// blobs named by their digest) and reported to a progress callback.
struct Input {
    int fd = -1;
    std::string name;  // for messages: the path or "-"
    Sha256* hash = nullptr;
    std::function<void(uint64_t bytes_read)> progress;
};

/// Extracts every entry of the archive on `in` into `tree`, updating `stats`. Files,
/// links and directories get the archive's mtimes (python's .pyc, make and rsync compare
/// them); anything the archive does not time (directories made on the way, whiteouts
/// made for OCI markers) gets 0, so the same archive always gives the same tree.
/// Errors: bad_input (hostile or broken archive, caps exceeded; the message says which
/// entry and why), no_space, io, interrupted.
Status extract(Input& in, SafeTree& tree, const ExtractOptions& opts, ExtractStats& stats);

}  // namespace dsec::layer
