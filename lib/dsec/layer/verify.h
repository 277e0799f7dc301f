// Checking a layer: its digest against its bytes, and that the image reads whole.
#pragma once

#include "dsec/layer/store.h"

namespace dsec::layer {

/// Recomputes the image's sha256 and compares it with the digest; then has
/// fsck.erofs decode every file. Errors: corrupt (digest mismatch, unreadable image),
/// not_found (image missing).
Status verify(const Store& store, const Layer& layer);

/// Only the digest check (fast path used before a first mount).
Status verify_digest(const Store& store, const Layer& layer);

}  // namespace dsec::layer
