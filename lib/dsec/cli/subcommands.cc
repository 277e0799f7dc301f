#include "dsec/cli/subcommands.h"

#include <algorithm>

namespace dsec::cli {

std::vector<bool> named_subcommands(std::span<const std::string_view> args, std::span<const Subcommands> table) {
    std::vector<bool> picked(table.size(), false);
    bool any = false;
    for (size_t i = 0; i < table.size(); i++)
        for (auto name : table[i].names)
            if (std::find(args.begin(), args.end(), name) != args.end()) picked[i] = any = true;
    if (!any) picked.assign(table.size(), true);
    return picked;
}

void add_named_subcommands(int cut, char** argv, std::span<const Subcommands> table) {
    std::vector<std::string_view> args(argv + std::min(cut, 1), argv + cut);
    auto picked = named_subcommands(args, table);
    for (size_t i = 0; i < table.size(); i++)
        if (picked[i]) table[i].add();
}

}  // namespace dsec::cli
