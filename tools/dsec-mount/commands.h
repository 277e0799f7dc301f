// dsec-mount's commands: the default (layers in, rootfs records out, or an overlay
// assembled with --at), ls, release and umount. Each function registers its options
// and sets ctx.action when chosen.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "dsec/cli/cli.h"
#include "dsec/layer/store.h"

namespace dsec::mount_tool {

using Action = std::function<Result<int>()>;

struct Context {
    cli::Paths paths;
    Action action;
    layer::Store store() const { return layer::Store(paths.layers()); }
};

void add_stack(CLI::App& app, Context& ctx);    // the default: rootfs records, --at
void add_query(CLI::App& app, Context& ctx);    // ls, release
void add_umount(CLI::App& app, Context& ctx);   // umount

}  // namespace dsec::mount_tool
