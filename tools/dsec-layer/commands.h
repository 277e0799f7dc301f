// dsec-layer's subcommands, one registration function each. Every function adds its
// subcommand to `app` and sets a callback that fills `run` with the work to do.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "dsec/cli/cli.h"
#include "dsec/layer/store.h"

namespace dsec::layer_tool {

/// The chosen subcommand's work, set by its callback.
using Action = std::function<Result<int>()>;

struct Context {
    cli::Paths paths;
    Action action;
    layer::Store store() const { return layer::Store(paths.layers()); }
};

void add_build(CLI::App& app, Context& ctx);
void add_import(CLI::App& app, Context& ctx);        // import and import-image
void add_export(CLI::App& app, Context& ctx);
void add_query(CLI::App& app, Context& ctx);         // ls, inspect
void add_maintenance(CLI::App& app, Context& ctx);   // tag, rm, verify, gc
void add_publish(CLI::App& app, Context& ctx);

}  // namespace dsec::layer_tool
