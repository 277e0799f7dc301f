#include "dsec/sys/paths.h"

#include <atomic>

namespace dsec {

namespace {
std::atomic<bool> got_signal{false};
}

bool interrupted() { return got_signal.load(); }

void set_interrupted() { got_signal = true; }

Error interrupted_error() { return make_error(Code::interrupted, "interrupted by signal"); }

}  // namespace dsec
