// Reading an image's manifest: an OCI image layout (index.json -> manifest -> config +
// layers) or a `docker save` layout (manifest.json with Config and Layers), both as a
// directory. Blob paths come from the image and are checked before they are opened.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/layer/store.h"
#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::layer {

/// One layer blob of an image: its path inside the image directory and, when the image
/// names it by content, the sha256 hex digits it must hash to.
struct ImageBlob {
    std::string path;
    std::string sha256;  // "" when unknown (older docker save layer.tar files)
};

/// What an image is made of, base layer first.
struct ImageManifest {
    std::string kind;  // "oci" or "docker"
    std::vector<ImageBlob> layers;
    ImageConfig config;
};

/// "sha256:<hex>" -> "blobs/sha256/<hex>". Errors: bad_input for other algorithms or
/// malformed digests.
Result<std::string> blob_path(const std::string& digest);

/// Picks a manifest descriptor from an OCI index: the first one, or the first whose
/// platform matches "os/arch[/variant]". Errors: bad_input (empty index), not_found.
Result<nlohmann::json> pick_manifest(const nlohmann::json& index, const std::string& platform);

/// The parts of an image config a sandbox starts with (its "config" object: Env,
/// WorkingDir, Entrypoint, Cmd, User). Errors: bad_input.
Result<ImageConfig> parse_image_config(const nlohmann::json& config);

/// Opens `path` beneath `dirfd` (symlinks allowed only if they stay inside).
/// Errors: bad_input when the path escapes, not_found, io.
Result<Fd> open_beneath(int dirfd, const std::string& path, const std::string& where);

/// Reads the manifest of the image in directory `dirfd` (`where` names it in messages).
/// Errors: bad_input (not an image, malformed JSON, bad paths), not_found.
Result<ImageManifest> read_image_manifest(int dirfd, const std::string& where, const std::string& platform);

}  // namespace dsec::layer
