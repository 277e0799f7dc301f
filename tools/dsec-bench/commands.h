// dsec-bench's subcommands and what they share: the options, the private workspace, the
// tree and its layer, the dsec tools and baselines, interleaved timing and the record.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dsec/bench/spawn.h"
#include "dsec/bench/stats.h"
#include "dsec/bench/workspace.h"
#include "dsec/cli/cli.h"

namespace dsec::bench_tool {

using nlohmann::json;
using Action = std::function<Result<int>()>;

/// Options every subcommand takes (some only read a few of them).
struct Options {
    size_t iterations = 0;  // 0: the subcommand's default
    size_t warmup = 2;
    size_t pause_ms = 0;    // idle time after each run, outside the timing
    size_t parallel = 0;    // 0: the subcommand's default
    size_t count = 0;       // 0: the subcommand's default
    double scale = 1.0;
    std::string plot;
    std::string tree;
    std::string memory_budget;
    std::string memcg = "own";  // dsec-run create --memcg
    size_t files = 0;
    bool raise_limits = false;
    bool use_state = false;
};

struct Context {
    cli::Paths paths;
    Options opt;
    Action action;
    std::optional<bench::Workspace> ws;
    std::string tree;   // the tree sandboxes start from
    std::string layer;  // its layer's name in the store, once built

    /// iterations, or `fallback` scaled by --scale (at least 1).
    size_t iterations(size_t fallback) const;
    /// A default size scaled by --scale (at least `floor`).
    size_t scaled(size_t fallback, size_t floor = 1) const;
};

/// Enters a private mount namespace, makes the workspace (private DSEC_ROOT/DSEC_RUN
/// unless --use-state) and the tree (--tree or a busybox tree).
Status prepare(Context& ctx);

/// Builds ctx.tree into a layer (once) and returns its name. Errors: dsec-layer's.
Result<std::string> ensure_layer(Context& ctx);

/// A bench record with name, what, machine and empty counts/figures/ratios/baselines.
json new_record(const std::string& name, const std::string& what);

/// One way of doing the measured thing: a tool, what it does (for the record), and
/// one timed run. `once` returns the milliseconds the run took.
struct Variant {
    std::string name;
    json does;
    std::function<Result<double>(size_t i)> once;
    std::string unavailable;  // set when the tool cannot run here, with the reason
    std::vector<double> samples;
    /// Other per-run figures ("read_bytes" -> samples), filled by `once`; the warm-up's
    /// are dropped like the times.
    std::shared_ptr<std::map<std::string, std::vector<double>>> extra =
        std::make_shared<std::map<std::string, std::vector<double>>>();
};

/// Runs the available variants alternately, each round starting one further along (A B
/// C, B C A, C A B, ...: none always runs right after the same other, whose leftover work,
/// a namespace's teardown in the kernel, would load it alone), idle for `pause_ms` after
/// each run, outside its timing, for that work to end: `warmup` rounds thrown
/// away, then `n` rounds kept. A variant that fails is marked unavailable with the
/// reason and dropped from later rounds; the others go on. Errors: interrupted.
Status interleave(std::vector<Variant>& variants, size_t n, size_t warmup, const std::string& label,
                  size_t pause_ms = 0);

/// Puts each variant's figure, its "baselines" entry and ratios of `subject` against
/// every other variant (per-pair ratios of interleaved runs, their median) in `rec`.
void add_variants(json& rec, const std::vector<Variant>& variants, const std::string& subject,
                  const std::string& figure_suffix = "_ms");

/// Latency CDFs of the variants, one panel, when --plot was given.
Status plot_cdfs(const Context& ctx, const std::vector<Variant>& variants, const std::string& title);

/// The dsec tools, found beside dsec-bench or on PATH ("" when absent).
struct DsecTools {
    std::string layer, mount, run;
    static DsecTools find();
    /// "" when dsec-run (and its `sub`command) is usable; otherwise why not.
    std::string run_missing(const std::string& sub) const;
};

/// The benchmark layer, once dsec-run and its `sub`command are usable and the layer is
/// built (ensure_layer). Errors: not_found (why dsec-run is unusable), dsec-layer's.
Result<std::string> dsec_ready(Context& ctx, const DsecTools& t, const std::string& sub);

/// What a dsec sandbox is made of, for the "baselines"/"does" entries.
json dsec_does(const std::string& how);

/// `dsec-run create --layers LAYER [options]`: one sandbox; returns its record (with "ms").
Result<json> create_sandbox(const DsecTools& t, const std::string& layer, const std::vector<std::string>& options = {});
/// `dsec-run destroy -P N ID...`.
Status destroy_sandboxes(const DsecTools& t, const std::vector<std::string>& ids, size_t parallel = 2);

/// Sandboxes a benchmark made: destroyed when the guard goes, on every path out.
struct Sandboxes {
    DsecTools tools;
    std::vector<std::string> ids;
    std::vector<int> pids;  // their init processes, when the record said
    ~Sandboxes() { (void)destroy(); }
    /// Destroys them all (two at a time) and forgets them.
    Status destroy();
    /// Records one created sandbox.
    void add(const json& rec);
};

/// One batch through the pipeline dsec-layer ls | dsec-mount --count N | dsec-run create
/// -P P [create_options]; the sandboxes made go to `boxes`. Returns the create step's wall
/// time (ms). Errors: the failing step's.
Result<double> create_batch(Sandboxes& boxes, const std::string& layer, size_t n, size_t parallel,
                            const std::vector<std::string>& create_options = {});

/// `bwrap` arguments for a one-shot command in `tree` (the flags).
std::vector<std::string> bwrap_argv(const std::string& tree, const std::vector<std::string>& cmd);

void add_compare(CLI::App& app, Context& ctx);  // compare, run, exec
void add_create(CLI::App& app, Context& ctx);   // create, density
void add_image(CLI::App& app, Context& ctx);
void add_import(CLI::App& app, Context& ctx);
void add_reclaim(CLI::App& app, Context& ctx);

/// Adds the options named in `which` ("n", "P", "count", "plot", "tree", ...) to `cmd`.
void add_options(CLI::App* cmd, Options& o, const std::vector<std::string>& which);

}  // namespace dsec::bench_tool
