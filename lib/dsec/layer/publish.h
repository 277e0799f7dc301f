// Publishing a layer from this node's store into another store, typically one on a
// shared filesystem that other nodes read.
#pragma once

#include "dsec/layer/store.h"

namespace dsec::layer {

/// What publish_to did.
struct Published {
    Layer layer;          // as the destination now holds it
    bool copied = false;  // false: the destination had the content already
};

/// Copies `layer` from `from` into `to` so that readers of `to`, on any node, see the
/// whole layer or none of it: the image goes to a staging file in to's tmp/ (the same
/// filesystem), is hashed as it is copied, fsynced and checked against the digest, then
/// renamed into place; the metadata follows and `name` (when set) comes last. Content
/// already in `to` is not copied again (only `name` is set), so nodes that publish the
/// same layer end with one. A kill at any point leaves at most a staging directory (gc removes it).
/// Errors: io, no_space, read_only (from `to`), corrupt (the source does not hash to
/// its digest), interrupted.
Result<Published> publish_to(const Store& from, const Layer& layer, const Store& to, const std::string& name);

}  // namespace dsec::layer
