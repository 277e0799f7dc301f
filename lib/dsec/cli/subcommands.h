// Registering only the subcommands a command line names. CLI11 builds every option,
// validator and help string of every subcommand it is given before it parses anything;
// for a tool with many subcommands that is most of its start-up work, and `dsec-run
// exec` pays it on each command it runs in a sandbox.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dsec::cli {

/// One registration function and the top-level subcommand names it adds.
struct Subcommands {
    std::vector<std::string_view> names;
    std::function<void()> add;
};

/// Which of `table`'s entries to register for `args` (argv without the program name, cut
/// before "--"): each entry one of whose names is among `args`; every entry when none is
/// (`--help`, `--version`, a misspelt name: CLI11 then lists or reports them as usual).
/// An option value that happens to equal a name only adds an entry, never loses one.
std::vector<bool> named_subcommands(std::span<const std::string_view> args, std::span<const Subcommands> table);

/// Calls the `add` of each entry named_subcommands picks for argv[1, cut).
void add_named_subcommands(int cut, char** argv, std::span<const Subcommands> table);

}  // namespace dsec::cli
