// Copying a sandbox's overlay upper into a staging tree that mkfs.erofs turns into a
// layer stacking on the sandbox's own layers.
//
// What overlayfs left in the upper is kept as overlayfs reads it from a lower layer:
// whiteouts (0/0 character devices, or files marked user.overlay.whiteout) become 0/0
// character devices, opaque directories (user.overlay.opaque = "y") get the mark in
// both namespaces (trusted.* for an overlay mounted by host root, user.* for one
// mounted inside a user namespace); every other overlay attribute (origin, impure, ...)
// is bookkeeping of the sandbox's own overlay and is dropped. Owners are written as
// seen inside the sandbox. As `dsec-layer import` does, set-id bits, device nodes and
// file capabilities are neutralised unless `keep_special` is set. Scrubbed paths are
// not copied at all; where one also exists in a layer below, a whiteout hides it.
#pragma once

#include <cstdint>
#include <sys/stat.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::snapshot {

struct PackOptions {
    bool keep_special = false;       // keep set-id bits, devices and file capabilities
    /// Host ids to ids inside, when the upper is read through an idmapped mount; unset:
    /// owners are stored as they are.
    std::function<std::optional<uint32_t>(uint32_t host)> inside;
    std::vector<std::string> scrub;  // clean relative paths ("a/b") left out of the tree
    /// `path` (clean, relative) as the topmost layer below that has it holds it (owners
    /// as inside); nullopt when none does. Scrubbed paths found there get a whiteout,
    /// under copies of their parent directories where the upper has none. Unset: none.
    std::function<std::optional<struct stat>(const std::string& path)> lower_stat;
};

struct PackStats {
    uint64_t entries = 0;
    uint64_t bytes = 0;                 // apparent size of the regular files copied
    std::vector<std::string> scrubbed;  // scrub paths that were present (or hidden)
    /// What was changed on the way ("setuid", "setgid", "device", "socket", "xattr:NAME"),
    /// the first kMaxListed of neutralized_total.
    std::vector<std::pair<std::string, std::string>> neutralized;
    uint64_t neutralized_total = 0;
    static constexpr size_t kMaxListed = 100;

    void note(const std::string& path, const std::string& what);
    /// Adds "neutralized" ([{path, what}]) and "neutralized_total", as dsec-layer import does.
    void annotate(nlohmann::json& record) const;
};

/// Copies the tree below `upper_fd` (a directory) into the empty directory `dest`,
/// never following a link. Errors: no_space (staging full), io (a read or write that
/// fails, with the path), bad_input (an entry the walk cannot represent).
Status copy_upper(int upper_fd, const std::string& dest, const PackOptions& opts, PackStats& stats);

/// True when `path` is `scrub` or lies below it (both clean relative paths).
bool is_scrubbed(const std::string& path, const std::vector<std::string>& scrub);

}  // namespace dsec::snapshot
