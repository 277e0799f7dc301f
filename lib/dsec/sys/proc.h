// Running helper programs (mkfs.erofs, ...) without a shell.
#pragma once

#include <string>
#include <vector>

#include "dsec/sys/error.h"

namespace dsec::proc {

/// What a finished helper did: exit status (or 128+signal) and the tail of its stderr.
struct Outcome {
    int status = 0;
    std::string stderr_tail;
};

/// Runs argv[0] (looked up in PATH) with stdin from /dev/null, stdout to stderr (so it
/// cannot corrupt the record stream) and stderr captured (last 4 KiB kept).
/// Errors: not_found when the program is missing, io when it cannot be started.
Result<Outcome> run(const std::vector<std::string>& argv);

/// Like run(), but an exit status other than 0 is an error (code "helper_failed")
/// naming the program and its stderr.
Status run_checked(const std::vector<std::string>& argv);

}  // namespace dsec::proc
