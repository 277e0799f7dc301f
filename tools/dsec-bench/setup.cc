// What the subcommands share: options, the private workspace and tree, the dsec tools,
// interleaved timing and the record's common parts.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "dsec/bench/plot.h"
#include "dsec/json/jsonl.h"
#include "commands.h"

namespace dsec::bench_tool {

size_t Context::iterations(size_t fallback) const {
    if (opt.iterations) return opt.iterations;
    return scaled(fallback);
}

size_t Context::scaled(size_t fallback, size_t floor) const {
    return std::max(floor, size_t(double(fallback) * opt.scale + 0.5));
}

void add_options(CLI::App* cmd, Options& o, const std::vector<std::string>& which) {
    for (auto& w : which) {
        if (w == "n") cmd->add_option("-n,--iterations", o.iterations, "measured runs of each variant")->check(CLI::Range(1, 1000000));
        if (w == "warmup") cmd->add_option("--warmup", o.warmup, "runs of each variant thrown away first")->capture_default_str();
        if (w == "pause") cmd->add_option("--pause", o.pause_ms, "idle milliseconds after each run (untimed), for the leftover kernel work to end")->check(CLI::Range(0, 60000));
        if (w == "P") cmd->add_option("-P,--parallel", o.parallel, "operations at once")->check(CLI::Range(1, 1024));
        if (w == "count") cmd->add_option("--count", o.count, "sandboxes to make")->check(CLI::Range(1, 1000000));
        if (w == "scale") cmd->add_option("--scale", o.scale, "multiply the default sizes and counts by F")->check(CLI::PositiveNumber);
        if (w == "plot") cmd->add_option("--plot", o.plot, "draw the figures to this SVG file with gnuplot");
        if (w == "tree") cmd->add_option("--tree", o.tree, "start sandboxes from this directory tree (default: a busybox tree)")->check(CLI::ExistingDirectory);
        if (w == "use-state") cmd->add_flag("--use-state", o.use_state, "use --root/--run (DSEC_ROOT/DSEC_RUN) instead of a private temporary state");
        if (w == "memory-budget") cmd->add_option("--memory-budget", o.memory_budget, "stop once the host's MemAvailable fell by this much (e.g. 4G)");
        if (w == "raise-limits") cmd->add_flag("--raise-limits", o.raise_limits, "raise kernel.pid_max, fs.file-max, RLIMIT_NOFILE, ... as needed; restored at the end");
        if (w == "memcg") cmd->add_option("--memcg", o.memcg, "memory cgroup of each sandbox: own, or shared by the run directory's (dsec-run create --memcg)")->check(CLI::IsMember({"own", "shared"}))->capture_default_str();
        if (w == "files") cmd->add_option("--files", o.files, "files each sandbox reads")->check(CLI::Range(1, 1000000));
    }
}

Status prepare(Context& ctx) {
    // Layer mounts made from here on vanish with this process's mount namespace.
    if (auto r = bench::private_mount_namespace(); !r) return r;
    if (ctx.opt.use_state) {
        ::setenv("DSEC_ROOT", ctx.paths.root.c_str(), 1);
        ::setenv("DSEC_RUN", ctx.paths.run.c_str(), 1);
        ::setenv("DSEC_STORE", ctx.paths.layers().c_str(), 1);
    } else {
        // A store named in the environment would be the user's: the private root's instead.
        ::unsetenv("DSEC_STORE");
    }
    auto ws = bench::Workspace::make(!ctx.opt.use_state);
    if (!ws) return fail(ws.error());
    ctx.ws.emplace(std::move(*ws));
    // Said once, on stderr: the figures of creates and destroys depend on it.
    if (auto f = bench::state_fs(std::getenv("DSEC_ROOT") ? std::getenv("DSEC_ROOT") : ctx.paths.root);
        f && f->journal == false)
        std::cerr << "dsec-bench: " << f->path << " is on ext4 without a journal, which skips inodes freed in the "
                     "last minutes at every new one: creates slow down with churn (README, \"The filesystem under the uppers\")"
                  << (ctx.opt.use_state ? "" : "; to measure your DSEC_ROOT's filesystem, set TMPDIR to a directory on it")
                  << std::endl;
    if (!ctx.opt.tree.empty()) {
        ctx.tree = ctx.opt.tree;
        return {};
    }
    ctx.tree = ctx.ws->dir() + "/tree";
    return bench::make_busybox_tree(ctx.tree);
}

Result<std::string> ensure_layer(Context& ctx) {
    if (!ctx.layer.empty()) return ctx.layer;
    auto t = DsecTools::find();
    if (t.layer.empty()) return fail(make_error(Code::not_found, "dsec-layer is not built", "dsec-layer"));
    std::string name = "dsec-bench-base";
    auto built = bench::spawn_checked({t.layer, "build", ctx.tree, "--name", name});
    if (!built) return fail(std::move(built.error()).context("building the benchmark's layer"));
    ctx.layer = name;
    return name;
}

json new_record(const std::string& name, const std::string& what) {
    return {{"type", "bench"},
            {"v", 1},
            {"name", name},
            {"what", what},
            {"machine", bench::read_machine().to_json()},
            {"counts", json::object()},
            {"figures", json::object()},
            {"ratios", json::object()},
            {"baselines", json::object()}};
}

Status interleave(std::vector<Variant>& variants, size_t n, size_t warmup, const std::string& label,
                  size_t pause_ms) {
    cli::Progress bar(label, (n + warmup) * variants.size());
    for (size_t round = 0; round < n + warmup; round++) {
        if (round == warmup)
            for (auto& v : variants) v.extra->clear();
        for (size_t k = 0; k < variants.size(); k++) {
            auto& v = variants[(round + k) % variants.size()];
            if (cli::interrupted()) return fail(cli::interrupted_error());
            bar.add(1);
            if (!v.unavailable.empty()) continue;
            auto ms = v.once(round);
            if (!ms) {
                v.unavailable = ms.error().describe();
                v.samples.clear();
                continue;
            }
            if (round >= warmup) v.samples.push_back(*ms);
            if (pause_ms) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
        }
    }
    return {};
}

void add_variants(json& rec, const std::vector<Variant>& variants, const std::string& subject,
                  const std::string& figure_suffix) {
    const Variant* base = nullptr;
    for (auto& v : variants)
        if (v.name == subject && v.unavailable.empty()) base = &v;
    for (auto& v : variants) {
        if (!v.unavailable.empty()) {
            rec["baselines"][v.name] = {{"unavailable", v.unavailable}, {"does", v.does}};
            continue;
        }
        rec["baselines"][v.name] = {{"does", v.does}};
        rec["figures"][v.name + figure_suffix] = bench::summarize(v.samples).to_json("ms");
        for (auto& [figure, samples] : *v.extra)
            rec["figures"][v.name + "_" + figure] = bench::summarize(samples).to_json("bytes");
        if (!base || &v == base) continue;
        auto pairs = bench::pair_ratios(base->samples, v.samples);
        auto s = bench::summarize(pairs);
        rec["ratios"][subject + "/" + v.name] = {{"median", s.median}, {"min", s.min}, {"max", s.max},
                                                 {"pairs", s.n},
                                                 {"means", subject + " time / " + v.name + " time, per interleaved pair"}};
    }
}

Status plot_cdfs(const Context& ctx, const std::vector<Variant>& variants, const std::string& title) {
    if (ctx.opt.plot.empty()) return {};
    bench::Panel p{title, "latency (ms, log scale)", "fraction of runs", true, false, {}};
    for (auto& v : variants)
        if (v.unavailable.empty()) p.series.push_back(bench::cdf(v.name, v.samples));
    return bench::plot_svg({p}, ctx.opt.plot);
}

DsecTools DsecTools::find() {
    return {bench::find_tool("dsec-layer"), bench::find_tool("dsec-mount"), bench::find_tool("dsec-run")};
}

std::string DsecTools::run_missing(const std::string& sub) const {
    if (run.empty()) return "dsec-run is not built";
    auto help = bench::spawn({run, sub, "--help"});
    if (!help || help->status != 0) return "dsec-run has no '" + sub + "' subcommand in this build";
    return "";
}

Result<std::string> dsec_ready(Context& ctx, const DsecTools& t, const std::string& sub) {
    if (auto why = t.run_missing(sub); !why.empty()) return fail(make_error(Code::not_found, why, "dsec-run"));
    return ensure_layer(ctx);
}

json dsec_does(const std::string& how) {
    return {{"how", how},
            {"namespaces", {"user", "mount", "pid", "net", "ipc", "uts", "cgroup"}},
            {"cgroups", "a cgroup per sandbox (memory, cpu, pids)"},
            {"root", "overlay: the EROFS layer (mounted once per host) + a private writable upper"},
            {"network", "none (private loopback)"}};
}

Result<json> create_sandbox(const DsecTools& t, const std::string& layer, const std::vector<std::string>& options) {
    std::vector<std::string> argv{t.run, "create", "--layers", layer};
    argv.insert(argv.end(), options.begin(), options.end());
    auto ran = bench::spawn_checked(argv, {.capture_stdout = true});
    if (!ran) return fail(ran.error());
    json rec = json::parse(bench::last_line(ran->out), nullptr, false);
    if (rec.is_discarded() || !rec.contains("id"))
        return fail(make_error(Code::bad_input, "dsec-run create printed no sandbox record"));
    rec["ms"] = ran->ms;
    return rec;
}

Status destroy_sandboxes(const DsecTools& t, const std::vector<std::string>& ids, size_t parallel) {
    // In chunks, so that thousands of ids never overflow one command line.
    constexpr size_t kChunk = 500;
    for (size_t at = 0; at < ids.size(); at += kChunk) {
        std::vector<std::string> argv{t.run, "destroy", "-P", std::to_string(parallel)};
        argv.insert(argv.end(), ids.begin() + long(at), ids.begin() + long(std::min(ids.size(), at + kChunk)));
        if (auto ran = bench::spawn_checked(argv); !ran) return fail(ran.error());
    }
    return {};
}

std::vector<std::string> bwrap_argv(const std::string& tree, const std::vector<std::string>& cmd) {
    std::vector<std::string> argv{"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", tree, "/",
                                  "--proc", "/proc", "--dev", "/dev"};
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    return argv;
}

}  // namespace dsec::bench_tool

namespace dsec::bench_tool {

Status Sandboxes::destroy() {
    auto ids_now = std::move(ids);
    ids.clear();
    pids.clear();
    return destroy_sandboxes(tools, ids_now);
}

void Sandboxes::add(const json& rec) {
    ids.push_back(rec.value("id", ""));
    if (rec.contains("pid") && rec["pid"].is_number_integer()) pids.push_back(rec["pid"].get<int>());
}

}  // namespace dsec::bench_tool
