// --layers: a rootfs made on the spot from layer names.
#include "commands.h"

namespace dsec::run_tool {

Result<mount::Rootfs> rootfs_from_layers(const Context&, const std::vector<std::string>&, const std::string&, bool) {
    return fail(make_error("unsupported", "--layers needs the mount library's stack (mount/stack.h)"));
}

}  // namespace dsec::run_tool
