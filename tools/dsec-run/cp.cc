// dsec-run cp: files into and out of a sandbox, or a tar stream on stdin / stdout.
#include <unistd.h>

#include <chrono>

#include "dsec/sandbox/cp.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/log.h"
#include "commands.h"

namespace dsec::run_tool {

namespace {
// "ID:/path" -> {id, path}; a host path (or "-") gives an empty id.
std::pair<std::string, std::string> split_ref(const std::string& ref) {
    auto colon = ref.find(':');
    if (colon == std::string::npos || colon == 0 || ref.find('/') < colon) return {"", ref};
    return {ref.substr(0, colon), ref.substr(colon + 1)};
}

struct CpArgs {
    std::string src, dst, max_bytes = "1G", max_entries = "100000";
};

Result<copy::Limits> limits_of(const CpArgs& a) {
    auto bytes = sandbox::parse_size(a.max_bytes);
    if (!bytes) return fail(bytes.error());
    auto entries = sandbox::parse_count(a.max_entries, "--max-entries");
    if (!entries) return fail(entries.error());
    return copy::Limits{*bytes, *entries};
}

Result<int> run_cp(Context& ctx, const CpArgs& a) {
    auto [src_id, src] = split_ref(a.src);
    auto [dst_id, dst] = split_ref(a.dst);
    if (src_id.empty() == dst_id.empty())
        return fail(make_error(Code::usage, "exactly one of SRC and DST must be ID:/path"));
    std::string id = src_id.empty() ? dst_id : src_id;
    if ((src_id.empty() ? dst : src).rfind('/', 0) != 0)
        return fail(make_error(Code::usage, "the path inside the sandbox must be absolute (ID:/path)"));
    auto limits = limits_of(a);
    if (!limits) return fail(limits.error());
    auto paths = ctx.sandbox_paths();
    bool to_stdout = !src_id.empty() && dst == "-";
    if (to_stdout) {
        if (::isatty(STDOUT_FILENO))
            return fail(make_error(Code::usage, "refusing to write a tar stream to a terminal (redirect it)"));
        cli::stdout_carries_data();
    }
    // Copy: a tar stream from stdin or to stdout, or a tree either way.
    auto start = std::chrono::steady_clock::now();
    Result<copy::Stats> stats =
        !dst_id.empty() ? (src == "-" ? sandbox::copy_in_tar(paths, id, STDIN_FILENO, dst, *limits)
                                      : sandbox::copy_in(paths, id, src, dst, *limits))
                        : (to_stdout ? sandbox::copy_out_tar(paths, id, src, STDOUT_FILENO, *limits)
                                     : sandbox::copy_out(paths, id, src, dst, *limits));
    // Into the sandbox's command log, failed or not (unless there is no such sandbox).
    if (fs::exists(paths.state_dir(id))) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
        json entry = sandbox::copy_log_record(id, a.src, a.dst, !dst_id.empty(), uint64_t(ms), stats);
        if (auto logged = sandbox::append_log(paths, id, entry); !logged)
            std::cerr << "dsec-run: command log: " << logged.error().detail() << std::endl;
    }
    if (!stats) return fail(std::move(stats.error()).about(id));
    // The record: on stdout, or on stderr when stdout carries the tar.
    json rec = {{"type", "copy"}, {"v", 1}, {"id", id}, {"src", a.src}, {"dst", a.dst}};
    stats->annotate(rec);
    if (to_stdout) {
        std::string line = jsonl::line_of(rec) + "\n";
        (void)!::write(STDERR_FILENO, line.data(), line.size());
        return 0;
    }
    if (auto r = jsonl::emit(rec); !r) return fail(r.error());
    return 0;
}
}  // namespace

void add_cp(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<CpArgs>();
    auto* cmd = app.add_subcommand(
        "cp", "copy files or directories into (DST is ID:/path) or out of (SRC is ID:/path) a sandbox; - is a tar "
              "stream on stdin (SRC) or stdout (DST)");
    cmd->footer(cli::example("  dsec-run cp ./src box1:/work/src\n"
                             "  dsec-run cp box1:/work/out.log .\n"
                             "  tar -C dir -cf - . | dsec-run cp - box1:/work; dsec-run cp box1:/work - | tar -tf -"));
    cmd->add_option("SRC", args->src, "host path, ID:/path, or - for a tar stream on stdin")->required();
    cmd->add_option("DST", args->dst, "host path, ID:/path, or - for a tar stream on stdout")->required();
    cmd->add_option("--max-bytes", args->max_bytes, "cap on the file bytes one copy moves (K, M, G, T)")
        ->capture_default_str();
    cmd->add_option("--max-entries", args->max_entries, "cap on the entries one copy moves")->capture_default_str();
    cmd->callback([&ctx, args] { ctx.action = [&ctx, args]() { return run_cp(ctx, *args); }; });
}

}  // namespace dsec::run_tool
