// dsec-run snapshot: a running sandbox's files as a new layer that stacks on its own.
//
// The sandbox is frozen (freeze.h) only while its upper is copied into a staging tree of
// the layer store (pack.h); the image is made and published after it runs again, so the
// freeze lasts as long as a copy, not as long as compression. Nothing reaches the store
// before the final rename: a failure or a kill leaves at most a staging directory that
// `dsec-layer gc` removes.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dsec/layer/store.h"
#include "dsec/sandbox/state.h"
#include "dsec/snapshot/pack.h"

namespace dsec::snapshot {

struct SnapshotOptions {
    std::string name;                  // layer name ("" for none)
    std::string policy;                // policy file whose "scrub" paths are left out ("" for none)
    bool keep_special = false;         // keep set-id bits, devices, file capabilities
    std::string compression = "lz4";
};

/// A published snapshot.
struct Snapshot {
    layer::Layer layer;
    PackStats stats;
    double frozen_ms = 0;
    double duration_ms = 0;
    uint64_t log_position = 0;  // bytes of the sandbox's command log when it was frozen
    /// The `layer` record (image path, parents) with "sandbox", "scrubbed",
    /// "neutralized", "frozen_ms", "duration_ms" and "log_position".
    nlohmann::json record(const layer::Store& store, const std::string& id) const;
};

/// Snapshots the running sandbox `id` into `store`. Call before starting threads.
/// Errors: not_found (unknown or destroyed sandbox, policy file), not_running (its init
/// is gone), bad_input (policy), no_space (store full while packing), interrupted,
/// the freezer's (busy, unsupported), make_image's.
Result<Snapshot> take(const sandbox::Paths& paths, const layer::Store& store, const std::string& id,
                      const SnapshotOptions& opts);

/// The digests of the layers a snapshot of this state stacks on, base first.
/// Errors: bad_input (a state without rootfs layers).
Result<std::vector<std::string>> parents_of(const nlohmann::json& state);

}  // namespace dsec::snapshot
