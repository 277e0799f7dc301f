#include "dsec/cli/cli.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>

#include "dsec/cli/help.h"
#include "dsec/cli/table.h"
#include "dsec/json/jsonl.h"

namespace dsec::cli {

namespace {
std::string program = "dsec";

void on_signal(int) { set_interrupted(); }

void install_signal_handlers() {
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    // A closed pipe downstream shows up as EPIPE from write(), handled as an error.
    signal(SIGPIPE, SIG_IGN);
    // Ignored by whoever started us, children would be reaped unasked and their pids free
    // for reuse while we still kill or wait for them by pid.
    signal(SIGCHLD, SIG_DFL);
}

// Descriptors 0-2 open, on /dev/null where they were closed: otherwise the first file a
// tool opens would become its "stdin" (relayed into a sandbox by dsec-run exec) or its
// "stdout" (records written over it).
void ensure_standard_fds() {
    for (int fd = 0; fd < 3; fd++)
        if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            // The lowest free descriptor is `fd` itself: the ones below it are open.
            (void)::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        }
}

std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}
}  // namespace



void add_path_options(CLI::App& app, Paths& paths) {
    paths.root = env_or("DSEC_ROOT", "/var/lib/dsec");
    paths.run = env_or("DSEC_RUN", "/run/dsec");
    app.add_option("--root", paths.root, "state directory for layers and uppers (env DSEC_ROOT)")
        ->capture_default_str();
    app.add_option("--run", paths.run, "runtime directory for mounts, sandbox state, locks (env DSEC_RUN)")
        ->capture_default_str();
    paths.store = env_or("DSEC_STORE", "");
    app.add_option("--store", paths.store, "layer store directory (env DSEC_STORE; default ROOT/layers)");
}

namespace {
bool stdout_is_data = false;
}

void stdout_carries_data() { stdout_is_data = true; }

void report(const Error& e) {
    // On a terminal the line on stderr says it all; records are for what reads a pipe.
    if (!stdout_is_data && !::isatty(STDOUT_FILENO)) {
        auto rec = e.to_record();
        rec["tool"] = program;  // which program of a pipeline failed
        (void)jsonl::emit(rec);
    }
    std::cerr << program << ": " << e.describe() << std::endl;
}

void add_version(CLI::App& app) { app.set_version_flag("--version", app.get_name() + " " + DSEC_VERSION); }

int main(CLI::App& app, int argc, char** argv, const std::function<Result<int>()>& body) {
    ensure_standard_fds();
    install_signal_handlers();
    program = app.get_name();
    use_plain_help(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        Error err = make_error(Code::usage, usage_message(app, e.what()));
        if (!::isatty(STDOUT_FILENO)) {
            auto rec = err.to_record();
            rec["tool"] = app.get_name();
            (void)jsonl::emit(rec);
        }
        std::cerr << app.get_name() << ": " << err.message << "\n" << help_hint(app) << std::endl;
        return kExitUsage;
    }
    Result<int> outcome;
    try {
        // Said up front: run without root, every tool would fail later with a raw EACCES or
        // EPERM, or worse, answer not_found, busy or an empty list.
        if (::geteuid() != 0)
            outcome = fail(make_error(Code::permission, app.get_name() +
                                                        " needs root: it mounts filesystems and makes namespaces and "
                                                        "cgroups (run it as root, e.g. with sudo)"));
        else
            outcome = body();
    } catch (const std::exception& e) {
        outcome = fail(make_error(Code::internal, e.what()));
    }
    if (!outcome) {
        const Error& e = outcome.error();
        if (interrupted() || e.code == Code::interrupted) {
            report(interrupted_error());
            return kExitInterrupted;
        }
        report(e);
        return e.code == Code::usage ? kExitUsage : kExitFailed;
    }
    if (interrupted()) {
        report(interrupted_error());
        return kExitInterrupted;
    }
    return exit_code(*outcome);
}

int exit_code(int code) { return code == kExitOk && jsonl::upstream_failed() ? kExitFailed : code; }

Progress::Progress(std::string label, uint64_t total)
    : label_(std::move(label)),
      total_(total),
      started_(std::chrono::steady_clock::now()),
      enabled_(::isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
}

void Progress::set(uint64_t done) {
    done_ = done;
    if (enabled_) draw();
}

void Progress::phase(const std::string& what) {
    if (!enabled_) return;
    std::cerr << "\r\033[K" << label_ << ": " << what << "..." << std::flush;
    shown_ = true;
}

void Progress::draw() {
    if (!total_) {
        // Bytes and rate, redrawn at most every 200 ms.
        auto now = std::chrono::steady_clock::now();
        if (shown_ && now - drawn_ < std::chrono::milliseconds(200)) return;
        drawn_ = now;
        shown_ = true;
        double seconds = std::chrono::duration<double>(now - started_).count();
        uint64_t rate = seconds > 0 ? uint64_t(double(done_) / seconds) : 0;
        std::cerr << "\r\033[K" << label_ << " " << human_bytes(done_) << "B (" << human_bytes(rate) << "B/s)"
                  << std::flush;
        return;
    }
    int permille = int(std::min<uint64_t>(done_, total_) * 1000 / total_);
    if (permille == last_permille_) return;
    last_permille_ = permille;
    shown_ = true;
    constexpr int kWidth = 30;
    int filled = permille * kWidth / 1000;
    std::string bar(size_t(filled), '#');
    bar.resize(kWidth, '.');
    std::cerr << "\r" << label_ << " [" << bar << "] " << permille / 10 << "." << permille % 10 << "%"
              << std::flush;
}

std::string example(const std::string& text) { return "\nExample:\n" + text + "\n"; }

}  // namespace dsec::cli
