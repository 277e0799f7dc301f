// dsec-run cp: files into and out of a sandbox as tar streams.
#include "commands.h"

namespace dsec::run_tool {

void add_cp(CLI::App&, Context&) {}

}  // namespace dsec::run_tool
