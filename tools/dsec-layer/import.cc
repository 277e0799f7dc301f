// Placeholder until import lands.
#include "commands.h"
namespace dsec::layer_tool {
void add_import(CLI::App&, Context&) {}
void add_export(CLI::App&, Context&) {}
}  // namespace dsec::layer_tool
