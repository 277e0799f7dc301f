// Importing tar archives and OCI / docker images as layers: extract into a staging tree
// (extract.h), build the EROFS image (build.h), publish (store.h). Nothing reaches the
// store before the final publish; every failure removes its staging directory.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dsec/layer/build.h"
#include "dsec/layer/extract.h"
#include "dsec/layer/store.h"

namespace dsec::layer {

/// A published layer and what extraction changed on the way.
struct Imported {
    Layer layer;
    ExtractStats stats;
    /// The `layer` record with the image path and the "neutralized" fields.
    nlohmann::json record(const Store& store) const;
};

struct TarImport {
    BuildOptions build;  // name, labels, compression, source
    bool oci = false;    // OCI layer whiteouts
    ExtractLimits limits;
    std::function<void(const std::string& phase)> phase;  // told when extraction is done
};

/// Imports the tar archive on `in` as one layer. Errors: as extract(), plus make_image's.
Result<Imported> import_tar(const Store& store, Input& in, const TarImport& opts);

struct ImageImport {
    BuildOptions build;    // name of the top layer, labels, compression
    bool squash = false;   // one layer for the whole image
    std::string platform;  // "os/arch[/variant]" for a multi-platform OCI index
    ExtractLimits limits;
    std::function<void(uint64_t done, uint64_t total)> progress;
};

/// Imports the image at `path` (an OCI layout or docker save directory, or a docker save
/// / OCI layout tar archive), base layer first; calls `published` on each layer as soon
/// as it is in the store. Lower layers are named NAME.1 (the base), NAME.2, ... when
/// the top gets NAME, and record the digests below them as parents.
/// Errors: bad_input (malformed image, blob digest mismatch, hostile layers), not_found.
Status import_image(const Store& store, const std::string& path, const ImageImport& opts,
                    const std::function<Status(const Imported&)>& published);

}  // namespace dsec::layer
