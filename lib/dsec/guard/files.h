// A policy's file rules made real inside a running sandbox: mounts in the sandbox's own
// mount namespace, made from outside before anything runs in it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "dsec/guard/policy.h"
#include "dsec/sys/error.h"

namespace dsec::guard {

/// What one step does to its path. One name table in files.cc.
enum class FileStep { read_only, read_write, hide };

/// The name of a step ("read_only", "read_write", "hidden").
std::string_view file_step_name(FileStep step);

/// The order the rules are applied in: read_only and read_write by depth (a rule about a
/// deeper path wins over one about a path above it; read_only first at equal depth),
/// hidden paths last so that nothing is mounted over their covers.
std::vector<std::pair<FileStep, std::string>> file_plan(const FileRules& rules);

/// Applies `rules` in the mount namespace of the sandbox whose init is `init_pid`
/// (started at `init_start`, to refuse a reused pid), as host root: a read-only or
/// read-write bind of each path onto itself (or the mount's own flag where the path is
/// a mount's root), and over each hidden path a clone of the empty, read-only directory
/// or file of the host's covers under `run_dir` (covers.h). Paths are looked up in the
/// sandbox's root and may not be or pass through a symlink (ELOOP, bad_input from the
/// host's lookup): the image, perhaps an agent's, must not steer a rule. A hidden path
/// that does not exist is left alone (there is nothing to hide); read_only and
/// read_write paths must exist. A hidden file with a hard link
/// that is not hidden too is refused (EMLINK), since the link would still show it
/// (links inside a hidden directory are not looked for). Errors: not_running, the
/// covers' errors, and the failing mount step (op, the path inside the sandbox, errno).
Status apply_file_rules(int init_pid, unsigned long long init_start, const FileRules& rules,
                        const std::string& run_dir);

}  // namespace dsec::guard
