// Garbage collection of the layer store.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "dsec/layer/store.h"

namespace dsec::layer {

/// Removes, under the store's writers' lock: staging directories no live build holds,
/// half-written temp files, images without metadata (and metadata without image),
/// names that point at missing layers, and layers that no name reaches (directly or as
/// a parent of a named layer) unless their digest is in `in_use`. Returns one `gc`
/// record per item ({"type":"gc","kind":...,"path":...}); `dry_run` removes nothing.
Result<std::vector<json>> collect_garbage(const Store& store, const std::set<std::string>& in_use, bool dry_run);

}  // namespace dsec::layer
