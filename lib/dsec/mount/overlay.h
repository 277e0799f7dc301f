// Overlay assembly with the new mount API: one `lowerdir+` per layer, so there is no
// option-string limit. Used by dsec-run inside each sandbox's own mount namespace and by
// `dsec-mount --at`.
#pragma once

#include <string>
#include <vector>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::mount {

/// The kernel's limit on overlay lower layers.
constexpr size_t kMaxLowers = 500;

struct OverlaySpec {
    std::vector<std::string> lowerdirs;  // top first
    std::string upper;                   // empty: a read-only overlay of the lowers
    std::string work;
    bool volatile_upper = false;         // "volatile": no syncs, for throwaway uppers
};

/// Creates a detached overlay mount (fsopen/fsconfig/fsmount) and returns its fd;
/// nothing is attached until attach(). Errors: too_many_layers (suggests squashing),
/// the failing fsconfig key with the kernel's message.
Result<Fd> make_overlay(const OverlaySpec& spec);

/// Attaches a detached mount at `target` (move_mount). Errors: io with the path.
Status attach(const Fd& mount, const std::string& target);

}  // namespace dsec::mount
