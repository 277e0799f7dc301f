// How --help reads: plain value names instead of CLI11's type names, defaults and
// "required" in words, the trailing command in the usage line of the subcommands that
// take one, and the exit statuses.
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

namespace dsec::cli {

/// Marks a subcommand as taking a command after "--": its usage line says so.
void takes_command(CLI::App* cmd);

/// Gives `app` and every subcommand under it dsec's help formatter.
void use_plain_help(CLI::App& app);

/// "unknown subcommand 'start'" when the parse stopped at a word that names no
/// subcommand; otherwise `what` as CLI11 said it.
std::string usage_message(const CLI::App& app, const std::string& what);

/// The help to point at after a usage error: of the deepest subcommand parsed.
std::string help_hint(const CLI::App& app);

}  // namespace dsec::cli
