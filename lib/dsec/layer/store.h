// The content-addressed layer store under $DSEC_ROOT/layers:
//
//   <hex>.erofs       the immutable EROFS image, named by its sha256
//   <hex>.json        its metadata (the "layer" record, minus "type"/"v")
//   names/<name>      a name: one line holding the digest ("sha256:<hex>")
//   tmp/              staging for builds in progress (gc removes leftovers)
//   .lock             taken exclusively by writers that publish or remove
//
// Readers take no lock, so a store on a read-only or shared filesystem works.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"
#include "dsec/sys/fs.h"

namespace dsec::layer {

using nlohmann::json;

/// The image config an OCI image asks a sandbox to start with.
struct ImageConfig {
    std::vector<std::string> env;
    std::string workdir;
    std::vector<std::string> entrypoint;
    std::vector<std::string> cmd;
    std::string user;
    bool empty() const { return env.empty() && workdir.empty() && entrypoint.empty() && cmd.empty() && user.empty(); }
};

/// One layer's metadata.
struct Layer {
    std::string digest;  // "sha256:<64 hex>"
    std::string name;    // the name it was built under ("" when none)
    std::map<std::string, std::string> labels;
    uint64_t size = 0;   // image file bytes
    uint64_t files = 0;  // entries in the tree (files, dirs, links, ...)
    std::string compression;  // none | lz4 | lz4hc
    std::string source;       // "dir:PATH", "tar:PATH", "oci:PATH#N", ...
    std::string created;      // RFC 3339 UTC
    std::vector<std::string> parents;  // digests of the layers below, base first
    std::optional<ImageConfig> config;

    /// The `layer` record (with "type" and "v"); `image` is the image path when known.
    json to_record(const std::string& image = {}) const;
    /// Parses a metadata object. Errors: bad_input.
    static Result<Layer> from_json(const json& j);
    /// The 64 hex digits of the digest.
    std::string hex() const;
};

/// Checks a layer name: 1-128 chars of [A-Za-z0-9._-], not starting with '.' or '-',
/// and not "names"/"tmp". Errors: bad_input.
Status check_name(const std::string& name);

/// "2026-12-02T17:05:22Z" for now.
std::string now_rfc3339();
/// The same for `unix_seconds`.
std::string rfc3339(int64_t unix_seconds);
/// The same from milliseconds, with them (".123") when `with_ms`.
std::string rfc3339_ms(int64_t unix_ms, bool with_ms = true);

/// A build's private staging directory, locked for as long as the build runs so that
/// `gc` can tell a live build from the leftovers of a killed one.
struct Staging {
    fs::Lock lock;   // released after the directory is gone (members die in reverse)
    fs::TempDir dir;
    const std::string& path() const { return dir.path(); }
};

class Store {
public:
    explicit Store(std::string dir) : dir_(std::move(dir)) {}
    const std::string& dir() const { return dir_; }
    std::string image_path(const std::string& digest) const;
    std::string meta_path(const std::string& digest) const;

    /// Creates the store's directories (writers only). Errors: io, read_only.
    Status init() const;
    /// A fresh staging directory under tmp/, removed when the TempDir goes.
    Result<Staging> staging(const std::string& prefix) const;
    /// Takes the writers' lock.
    Result<fs::Lock> lock() const;

    /// Moves the finished image `image_file` (inside a staging dir) into the store
    /// under its digest, writes the metadata and, when `layer.name` is set, the name.
    /// Publishing content that is already present keeps the existing image and
    /// updates its metadata. Fills in digest and size. Errors: io, no_space.
    Result<Layer> publish(const std::string& image_file, Layer layer) const;

    /// Resolves a name, a full digest, or a unique digest prefix (at least 4 hex).
    /// Errors: not_found, ambiguous.
    Result<Layer> resolve(const std::string& ref) const;
    /// Every layer in the store, sorted by digest.
    Result<std::vector<Layer>> all() const;
    /// Layers with label k=v.
    Result<std::vector<Layer>> with_label(const std::string& key, const std::string& value) const;
    /// name -> digest for every name.
    Result<std::map<std::string, std::string>> names() const;

    /// Points `name` at `digest`.
    Status tag(const std::string& name, const std::string& digest) const;
    /// Removes a layer and every name pointing at it (metadata first, then image).
    Status remove(const Layer& layer) const;
    /// Removes one name. Errors: not_found when `name` is not a name.
    Status untag(const std::string& name) const;
    /// What rm_name() did: the name's layer, whether it went too, the names it keeps.
    struct Untagged {
        std::string digest;
        bool layer_removed = false;
        std::vector<std::string> names_left;
    };
    /// `rm NAME` as `podman rmi` of a tag: removes the name; the layer goes with its last
    /// name, unless `users` live sandboxes use it (then nothing changes). One lock held
    /// throughout. Errors: not_found (not a name), busy.
    Result<Untagged> rm_name(const std::string& name, int users) const;
    /// Writes a layer's metadata (after a tag changes its name, say).
    Status write_meta(const Layer& layer) const;

private:
    Result<Layer> load(const std::string& hex) const;
    Status remove_locked(const std::string& digest, const std::map<std::string, std::string>& names) const;
    std::string dir_;
};

}  // namespace dsec::layer
