// Running and timing the programs a benchmark drives: the dsec tools found beside
// dsec-bench, and the baselines (bwrap, runc, tar, cp) found on PATH.
#pragma once

#include <string>
#include <vector>

#include "dsec/sys/error.h"

namespace dsec::bench {

/// Milliseconds on the monotonic clock.
double now_ms();

/// What a program gets and what is kept of its output.
struct SpawnOptions {
    std::string input;            // written to its stdin (then closed); empty: /dev/null
    bool capture_stdout = false;  // otherwise stdout goes to /dev/null
};

/// A finished program: exit status (128+signal when killed), wall time from spawn to
/// reap, its stdout when captured, and the last 4 KiB of its stderr.
struct Ran {
    int status = 0;
    double ms = 0;
    std::string out;
    std::string err_tail;
};

/// Spawns argv (argv[0] looked up in PATH unless it holds a '/') and waits for it.
/// Errors: not_found when the program cannot be started, io for pipe failures.
Result<Ran> spawn(const std::vector<std::string>& argv, const SpawnOptions& opts = {});

/// Like spawn(), but a non-zero status is an error (helper_failed) quoting the last
/// line of its stderr.
Result<Ran> spawn_checked(const std::vector<std::string>& argv, const SpawnOptions& opts = {});

/// Where program `name` is: beside this executable (/proc/self/exe's directory) first,
/// then PATH. "" when found nowhere.
std::string find_tool(const std::string& name);

/// The last non-empty line of `text`, for error messages.
std::string last_line(std::string text);

}  // namespace dsec::bench
