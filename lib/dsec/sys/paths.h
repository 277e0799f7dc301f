// Where dsec keeps its state, and whether the user asked it to stop: the two things the
// library needs from the command line, without depending on it.
#pragma once

#include <string>

#include "dsec/sys/error.h"

namespace dsec {

/// `--root`/DSEC_ROOT (layers, uppers) and `--run`/DSEC_RUN (mountpoints, sandbox
/// state, locks). `--store`/DSEC_STORE puts the layer store elsewhere (a shared or
/// read-only filesystem); empty means <root>/layers.
struct Paths {
    std::string root;
    std::string run;
    std::string store;
    std::string layers() const { return store.empty() ? root + "/layers" : store; }
};

/// True once SIGINT or SIGTERM arrived (the tools' main installs the handler); long
/// loops check it and stop.
bool interrupted();

/// Marks the process as interrupted (async-signal-safe: the signal handler calls it).
void set_interrupted();

/// The error to return when interrupted() is seen: code "interrupted".
Error interrupted_error();

}  // namespace dsec
