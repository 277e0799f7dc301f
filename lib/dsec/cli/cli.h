// What every tool's main shares: standard options, the error wrapper, exit codes,
// interruption and progress bars.
#pragma once

#include <atomic>
#include <functional>
#include <chrono>
#include <string>

#include <CLI/CLI.hpp>

#include "dsec/cli/help.h"
#include "dsec/sys/error.h"
#include "dsec/sys/paths.h"

namespace dsec::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

/// Where dsec keeps its state (dsec/sys/paths.h: the library's, not the CLI's).
using Paths = dsec::Paths;
using dsec::interrupted;
using dsec::interrupted_error;

/// Adds --version, which prints "<tool> <version>" (the one version of the project, which
/// the man pages carry too).
void add_version(CLI::App& app);

/// Adds --root, --run and --store to `app`, filled from the environment or the defaults.
void add_path_options(CLI::App& app, Paths& paths);

/// Parses argv, runs `body`, and turns its outcome into the process's exit code: an
/// error becomes an error record on stdout and a human line on stderr. CLI usage errors
/// exit 2; SIGINT/SIGTERM during the body exit 130; an upstream error record seen on
/// stdin makes an otherwise successful run exit 1. `body` may return an exit code. Run
/// by anyone but root, the body is not run: a "permission" error says root is needed.
int main(CLI::App& app, int argc, char** argv, const std::function<Result<int>()>& body);

/// The exit code main() turns a body's successful `code` into: kExitFailed for kExitOk
/// when an upstream error record was seen on stdin. For a body that exits by itself.
int exit_code(int code);

/// Reports an error (record on stdout, line on stderr) without exiting; for batches
/// that go on past a failed item.
void report(const Error& e);

/// From now on standard output carries a data stream (a tar), not records: an error is
/// reported on stderr only, so that it never lands in the middle of the stream.
void stdout_carries_data();

/// A progress bar on stderr, drawn only when stderr is a tty. With a total of 0 (a pipe:
/// the size is not known) it shows bytes done and the rate instead, a few times a second.
class Progress {
public:
    Progress(std::string label, uint64_t total);
    ~Progress();
    void set(uint64_t done);
    void add(uint64_t n) { set(done_ + n); }
    /// Replaces the bar by a line naming the work now under way ("building the image").
    void phase(const std::string& what);

private:
    void draw();
    std::string label_;
    uint64_t total_;
    uint64_t done_ = 0;
    int last_permille_ = -1;
    std::chrono::steady_clock::time_point started_, drawn_;
    bool enabled_;
    bool shown_ = false;  // a line is on the terminal (the destructor clears it)
};

/// Formats an example section for --help.
std::string example(const std::string& text);

}  // namespace dsec::cli
