// Turning a directory tree into a published layer: a reproducible EROFS image
// (fixed build time and UUID, files' own mtimes, sorted entries, numeric owners) named by its digest.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dsec/layer/store.h"

namespace dsec::layer {

/// What to record about a build besides the tree itself.
struct BuildOptions {
    std::string name;
    std::map<std::string, std::string> labels;
    std::string compression = "lz4";  // none | lz4 | lz4hc
    std::string source;
    std::vector<std::string> parents;
    std::optional<ImageConfig> config;
};

/// Checks a compression name. Errors: usage.
Status check_compression(const std::string& compression);

/// Writes the EROFS image of `tree` to `image_file` with mkfs.erofs.
/// Errors: helper_failed (mkfs.erofs's message), not_found (no mkfs.erofs).
Status make_image(const std::string& tree, const std::string& image_file, const std::string& compression);

/// Sets the build time in an EROFS image's superblock to 0 and renews its checksum, so
/// that images of the same tree are the same bytes while every file keeps its mtime.
/// Errors: bad_input (not an EROFS image), io.
Status pin_build_time(const std::string& image_file);

/// Counts the entries below `tree` (not following links). Errors: io.
Result<uint64_t> count_entries(const std::string& tree);

/// Makes the image of `tree` at `image` (a path inside a staging directory), counts
/// its entries and publishes it with `opts`' metadata. Errors: as make_image and publish.
Result<Layer> image_and_publish(const Store& store, const std::string& tree, const std::string& image,
                                const BuildOptions& opts);

/// Builds `tree` into an image inside a staging directory of `store` and publishes
/// it. Nothing is visible in the store until the final rename; an interrupted build
/// leaves only a staging directory that `gc` removes.
Result<Layer> build_tree(const Store& store, const std::string& tree, const BuildOptions& opts);

}  // namespace dsec::layer
