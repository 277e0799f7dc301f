// The `rootfs` record: what a sandbox's root is made of. dsec-mount writes it,
// dsec-run reads it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::mount {

/// One mounted layer in a stack.
struct StackLayer {
    std::string digest;  // "sha256:<hex>"
    std::string name;
    std::string path;    // where it is mounted: $DSEC_RUN/layers/<hex>
};

/// A sandbox root: layers base first, overlay lowerdirs top first, upper and work.
struct Rootfs {
    std::string id;
    std::vector<StackLayer> layers;      // base first
    std::vector<std::string> lowerdirs;  // top first (overlayfs order)
    std::string upper;
    std::string work;
    nlohmann::json config = nlohmann::json::object();  // image config, may be empty

    /// {"type":"rootfs","v":1,...}
    nlohmann::json to_record() const;
    /// Parses a rootfs record. Errors: bad_input naming the missing field.
    static Result<Rootfs> from_record(const nlohmann::json& j);
};

}  // namespace dsec::mount
