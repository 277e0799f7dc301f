// dsec-guard's commands. Each function registers its options and sets ctx.action when
// chosen.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "dsec/cli/cli.h"

namespace dsec::guard_tool {

using Action = std::function<Result<int>()>;

struct Context {
    cli::Paths paths;
    Action action;
};

void add_check(CLI::App& app, Context& ctx);  // check POLICY...
void add_net(CLI::App& app, Context& ctx);    // net allow|deny ID DEST...
void add_apply(CLI::App& app, Context& ctx);  // apply ID POLICY
void add_events(CLI::App& app, Context& ctx); // events [ID...] [-f]
void add_refresh(CLI::App& app, Context& ctx); // refresh [ID...]

}  // namespace dsec::guard_tool
