// dsec-reclaim's subcommands, one registration function each (dsec-run's shape). Each adds
// its subcommand to `app` and, when chosen, fills ctx.action with the work to do.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "dsec/cli/cli.h"
#include "dsec/json/jsonl.h"
#include "dsec/reclaim/report.h"

namespace dsec::reclaim_tool {

using Action = std::function<Result<int>()>;

struct Context {
    cli::Paths paths;
    Action action;
    size_t problems = 0;  // items that failed; the pass went on (exit 1 at the end)
    /// Events to stdout; problems as error records and lines on stderr, counted.
    reclaim::Report report();
    /// 1 when any item failed, else 0.
    int exit_code() const { return problems ? cli::kExitFailed : cli::kExitOk; }
};

/// Parses a DURATION option ("90s", "15m", "1h") into seconds. Errors: usage.
Result<int64_t> seconds(const std::string& text, const char* option);
/// The same in milliseconds.
Result<int64_t> milliseconds(const std::string& text, const char* option);

void add_gc(CLI::App& app, Context& ctx);
void add_ttl(CLI::App& app, Context& ctx);
void add_status(CLI::App& app, Context& ctx);
void add_idle(CLI::App& app, Context& ctx);   // idle, resume
void add_swap(CLI::App& app, Context& ctx);
void add_ksm(CLI::App& app, Context& ctx);

}  // namespace dsec::reclaim_tool
