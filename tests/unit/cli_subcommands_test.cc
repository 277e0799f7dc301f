// Which subcommands a tool registers: only those named on its command line.
#include <doctest/doctest.h>

#include "dsec/cli/subcommands.h"

using namespace dsec;

namespace {
std::vector<bool> pick(std::vector<std::string_view> args) {
    static const cli::Subcommands table[] = {{{"create"}, [] {}}, {{"exec"}, [] {}}, {{"ls", "inspect"}, [] {}}};
    return cli::named_subcommands(args, table);
}
}  // namespace

TEST_CASE("only the subcommands named on the command line are registered") {
    CHECK(pick({"exec", "box1"}) == std::vector<bool>{false, true, false});
    CHECK(pick({"--root", "/r", "inspect", "box1"}) == std::vector<bool>{false, false, true});
    // A value equal to another name adds that one too; the one chosen is never lost.
    CHECK(pick({"create", "--name", "exec"}) == std::vector<bool>{true, true, false});
}

TEST_CASE("no subcommand named: all are registered, for --help and CLI11's own errors") {
    CHECK(pick({}) == std::vector<bool>{true, true, true});
    CHECK(pick({"--help"}) == std::vector<bool>{true, true, true});
    CHECK(pick({"exce", "box1"}) == std::vector<bool>{true, true, true});
    CHECK(pick({"exec1"}) == std::vector<bool>{true, true, true});
}

TEST_CASE("add_named_subcommands looks only before the cut") {
    int added[2] = {0, 0};
    const cli::Subcommands table[] = {{{"exec"}, [&] { added[0]++; }}, {{"ls"}, [&] { added[1]++; }}};
    char a0[] = "dsec-run", a1[] = "exec", a2[] = "box", a3[] = "--", a4[] = "ls";
    char* argv[] = {a0, a1, a2, a3, a4, nullptr};
    cli::add_named_subcommands(3, argv, table);
    CHECK(added[0] == 1);
    CHECK(added[1] == 0);
}
