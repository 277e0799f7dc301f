// dsec-bench create and density: sandboxes made per second at a concurrency, and host
// memory per idle sandbox with create latency as more of them are alive.
#include <atomic>
#include <iostream>
#include <mutex>
#include <thread>

#include "dsec/bench/limits.h"
#include "dsec/bench/density.h"
#include "dsec/bench/memory.h"
#include "dsec/bench/plot.h"
#include "dsec/json/jsonl.h"
#include "dsec/sandbox/limits.h"
#include "commands.h"

namespace dsec::bench_tool {

// One batch through the pipeline: dsec-layer ls | dsec-mount --count N | dsec-run create -P P.
// Returns the wall time of the create step alone.
Result<double> create_batch(Sandboxes& boxes, const std::string& layer, size_t n, size_t parallel,
                            const std::vector<std::string>& create_options) {
    auto& t = boxes.tools;
    auto ls = bench::spawn_checked({t.layer, "ls", layer}, {.capture_stdout = true});
    if (!ls) return fail(ls.error());
    auto roots = bench::spawn_checked({t.mount, "--count", std::to_string(n)}, {.input = ls->out, .capture_stdout = true});
    if (!roots) return fail(roots.error());
    std::vector<std::string> argv{t.run, "create", "-P", std::to_string(parallel)};
    argv.insert(argv.end(), create_options.begin(), create_options.end());
    auto made = bench::spawn(argv, {.input = roots->out, .capture_stdout = true});
    if (!made) return fail(made.error());
    std::istringstream in(made->out);
    std::string line;
    while (std::getline(in, line)) {
        json rec = json::parse(line, nullptr, false);
        if (!rec.is_discarded() && rec.value("type", "") == "sandbox" && rec.contains("id")) boxes.add(rec);
    }
    if (made->status != 0) return fail(make_error(Code::helper_failed, "dsec-run create -P failed: " + bench::last_line(made->err_tail)));
    return made->ms;
}

namespace {

// Creates `n` sandboxes with `parallel` workers, one `dsec-run create` per sandbox.
// Fills `boxes` and returns each create's latency in ms, plus the wall time.
Result<std::pair<std::vector<double>, double>> create_parallel(Sandboxes& boxes, const std::string& layer, size_t n,
                                                               size_t parallel) {
    std::vector<double> ms;
    std::mutex mu;
    std::atomic<size_t> next{0};
    std::optional<Error> first_error;
    cli::Progress bar("create", n);
    double start = bench::now_ms();
    auto worker = [&] {
        for (size_t i; (i = next++) < n;) {
            if (cli::interrupted()) return;
            auto rec = create_sandbox(boxes.tools, layer);
            std::lock_guard lock(mu);
            if (!rec) {
                if (!first_error) first_error = rec.error();
                next = n;
                return;
            }
            boxes.add(*rec);
            ms.push_back(rec->value("ms", 0.0));
            bar.add(1);
        }
    };
    std::vector<std::thread> threads;
    for (size_t t = 0; t < std::min(parallel, n); t++) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    double wall = bench::now_ms() - start;
    if (first_error) return fail(*first_error);
    if (cli::interrupted()) return fail(cli::interrupted_error());
    return std::pair{ms, wall};
}

Status run_create(Context& ctx) {
    Sandboxes boxes{DsecTools::find(), {}, {}};
    auto layer = dsec_ready(ctx, boxes.tools, "create");
    if (!layer) return fail(layer.error());
    size_t n = ctx.iterations(40), parallel = ctx.opt.parallel ? ctx.opt.parallel : 2;
    auto rec = new_record("create", "idle sandboxes created from one layer, one dsec-run create --layers LAYER "
                                    "process per sandbox, P at a time; then destroyed");
    // Warm-up: the layer's mount and the caches, then thrown away.
    for (size_t i = 0; i < ctx.opt.warmup; i++) {
        auto w = create_sandbox(boxes.tools, *layer);
        if (!w) return fail(w.error());
        boxes.add(*w);
    }
    if (auto r = boxes.destroy(); !r) return r;
    auto made = create_parallel(boxes, *layer, n, parallel);
    if (!made) return fail(made.error());
    auto& [ms, wall] = *made;
    double destroy_start = bench::now_ms();
    if (auto r = boxes.destroy(); !r) return r;
    double destroy_ms = bench::now_ms() - destroy_start;
    rec["counts"] = {{"sandboxes", n}, {"parallel", parallel}, {"warmup", ctx.opt.warmup},
                     {"created_per_second", double(n) / (wall / 1000.0)},
                     {"destroyed_per_second", double(n) / (destroy_ms / 1000.0)}};
    rec["figures"]["create_ms"] = bench::summarize(ms).to_json("ms");
    rec["baselines"]["dsec"] = {{"does", dsec_does("dsec-run create --layers LAYER, P processes at a time")}};
    // The pipeline form, when dsec-mount is built: one process makes the whole batch.
    if (!boxes.tools.mount.empty()) {
        auto batch = create_batch(boxes, *layer, n, parallel);
        if (!batch) return fail(batch.error());
        rec["counts"]["batch_created_per_second"] = double(boxes.ids.size()) / (*batch / 1000.0);
        rec["baselines"]["dsec-batch"] = {{"does", dsec_does("dsec-layer ls | dsec-mount --count N | dsec-run create -P P")}};
        if (auto r = boxes.destroy(); !r) return r;
    } else {
        rec["baselines"]["dsec-batch"] = {{"unavailable", "dsec-mount is not built"}};
    }
    if (!ctx.opt.plot.empty()) {
        bench::Panel p{"create latency at -P " + std::to_string(parallel), "latency (ms)", "fraction of creates",
                       false, false, {bench::cdf("dsec-run create", ms)}};
        if (auto r = bench::plot_svg({p}, ctx.opt.plot); !r) return r;
        rec["plot"] = ctx.opt.plot;
    }
    return jsonl::emit(rec);
}

// The memory sample now: the host's accounts, the inits' memory cgroups (a shared one
// once) and Pss, and the change since the previous sample.
bench::MemorySample sample_memory(const bench::HostMemory& before, const Sandboxes& boxes,
                                  const std::vector<bench::MemorySample>& earlier) {
    double pss = 0;
    for (int pid : boxes.pids)
        if (auto p = bench::process_pss(pid)) pss += double(*p);
    double cg = double(bench::cgroup_memory_of(boxes.pids));
    auto now = bench::host_memory();
    return bench::memory_sample(boxes.ids.size(), before, now ? &*now : nullptr, cg, pss, boxes.pids.size(),
                                earlier.empty() ? nullptr : &earlier.back());
}

Status plot_density(const Context& ctx, const std::vector<std::pair<double, double>>& latency,
                    const std::vector<bench::MemorySample>& mem) {
    // Every create up to 200, then medians and 90th percentiles of runs of creates.
    bench::Panel lat{"create latency against sandboxes alive", "sandboxes alive", "dsec-run create (ms)", false, true,
                     {}};
    if (latency.size() <= 200) {
        lat.series.push_back({"create", latency});
    } else {
        size_t width = (latency.size() + 199) / 200;
        lat.series.push_back({"median of each " + std::to_string(width), bench::bucketed(latency, 200, 50)});
        lat.series.push_back({"90th percentile of each " + std::to_string(width), bench::bucketed(latency, 200, 90)});
    }
    bench::Panel m{"host memory per idle sandbox (" + ctx.opt.memcg + " memcg)", "sandboxes alive", "KiB per sandbox",
                   false, true, {}};
    bench::Panel marginal{"marginal memory: per sandbox added since the previous sample", "sandboxes alive",
                          "KiB per sandbox added", false, true, {}};
    auto series = [&](bench::Panel& panel, const char* title, double bench::MemorySample::*field) {
        bench::Series s{title, {}};
        for (auto& x : mem) s.points.push_back({double(x.alive), x.*field / 1024.0});
        panel.series.push_back(s);
    };
    series(m, "MemAvailable drop", &bench::MemorySample::available);
    series(m, "Committed_AS rise", &bench::MemorySample::committed);
    series(m, "Slab rise", &bench::MemorySample::slab);
    series(m, "memory cgroup usage", &bench::MemorySample::cgroup);
    series(m, "Pss of init", &bench::MemorySample::pss);
    series(marginal, "MemAvailable drop", &bench::MemorySample::marginal_available);
    series(marginal, "Slab rise", &bench::MemorySample::marginal_slab);
    return bench::plot_svg({lat, m, marginal}, ctx.opt.plot);
}

// Create and destroy latency at a fixed number alive: `probes` creates, each destroyed
// again at once (timed too), so every one of them starts with the same number alive.
struct Probes {
    std::vector<double> create_ms, destroy_ms;
};

Result<Probes> probe_creates(const DsecTools& t, const std::string& layer, size_t probes,
                             const std::vector<std::string>& options) {
    Probes out;
    for (size_t i = 0; i < probes; i++) {
        if (cli::interrupted()) return fail(cli::interrupted_error());
        auto made = create_sandbox(t, layer, options);
        if (!made) return fail(made.error());
        out.create_ms.push_back(made->value("ms", 0.0));
        double start = bench::now_ms();
        if (auto r = destroy_sandboxes(t, {made->value("id", "")}, 1); !r) return fail(r.error());
        out.destroy_ms.push_back(bench::now_ms() - start);
    }
    return out;
}

Status run_density(Context& ctx) {
    Sandboxes boxes{DsecTools::find(), {}, {}};
    auto layer = dsec_ready(ctx, boxes.tools, "create");
    if (!layer) return fail(layer.error());
    size_t n = ctx.opt.count ? ctx.opt.count : ctx.scaled(100);
    uint64_t budget = 0;
    if (!ctx.opt.memory_budget.empty()) {
        auto b = sandbox::parse_size(ctx.opt.memory_budget);
        if (!b) return fail(b.error());
        budget = *b;
        if (!ctx.opt.count) n = 1000000;  // the budget is the bound
    }
    auto rec = new_record("density", "idle sandboxes created one at a time (dsec-run create --layers LAYER) until "
                                     "--count or --memory-budget; host memory per sandbox by the kernel's accounts, "
                                     "the marginal memory per sandbox added, and create latency against the number "
                                     "alive");
    // Each sandbox's memory cgroup: its own, or one shared by the run directory's.
    std::vector<std::string> create_options{"--memcg", ctx.opt.memcg};
    rec["memcg"] = ctx.opt.memcg;
    bench::RaisedLimits limits;
    if (ctx.opt.raise_limits)
        if (auto r = limits.raise(bench::limits_for(n == 1000000 ? 100000 : n)); !r) return r;
    rec["limits_raised"] = limits.to_json();
    for (auto& c : rec["limits_raised"]) {
        std::string name = c["name"].get<std::string>();
        if (c["after"] == c["before"])
            std::cerr << "dsec-bench: could not raise " << name << " above " << c["before"] << ": "
                      << c.value("note", std::string()) << "\n";
        else
            std::cerr << "dsec-bench: raised " << name << " from " << c["before"] << " to " << c["after"]
                      << " (restored at the end)\n";
    }

    // Warm-up: the layer's mount and the tools' caches are in place before the baseline.
    for (size_t i = 0; i < ctx.opt.warmup; i++) {
        auto w = create_sandbox(boxes.tools, *layer, create_options);
        if (!w) return fail(w.error());
        boxes.add(*w);
    }
    if (auto r = boxes.destroy(); !r) return r;
    auto before = bench::host_memory();
    if (!before) return fail(before.error());
    std::vector<double> ms;
    std::vector<std::pair<double, double>> latency;
    std::vector<bench::MemorySample> mem;
    std::string stopped = "count";
    // Probes at 10 alive and again at the end (when the count is above 10).
    size_t probes = ctx.iterations(20), base_alive = 10;
    Probes probe_base, probe_end;
    cli::Progress bar("density", n);
    for (size_t i = 0; i < n; i++) {
        if (i == base_alive) {
            auto p = probe_creates(boxes.tools, *layer, probes, create_options);
            if (!p) return fail(p.error());
            probe_base = std::move(*p);
        }
        if (cli::interrupted()) return fail(cli::interrupted_error());
        auto made = create_sandbox(boxes.tools, *layer, create_options);
        if (!made) {
            // Running out of something is the density limit; say what it was.
            stopped = "create failed: " + made.error().describe();
            break;
        }
        boxes.add(*made);
        ms.push_back(made->value("ms", 0.0));
        latency.push_back({double(i), ms.back()});
        bar.set(i + 1);
        if (bench::density_sample_at(boxes.ids.size(), n)) mem.push_back(sample_memory(*before, boxes, mem));
        if (budget) {
            auto now = bench::host_memory();
            if (now && bench::over_budget(*before, *now, budget)) {
                stopped = "memory budget";
                break;
            }
        }
    }
    if (mem.empty() || mem.back().alive != boxes.ids.size()) mem.push_back(sample_memory(*before, boxes, mem));
    size_t alive = boxes.ids.size();
    if (alive > base_alive && !probe_base.create_ms.empty()) {
        auto p = probe_creates(boxes.tools, *layer, probes, create_options);
        if (!p) return fail(p.error());
        probe_end = std::move(*p);
    }
    double teardown = bench::now_ms();
    if (auto r = boxes.destroy(); !r) return r;
    double teardown_s = (bench::now_ms() - teardown) / 1000.0;
    limits.restore();

    rec["counts"] = {{"sandboxes", alive}, {"stopped_by", stopped}, {"memory_budget_bytes", budget},
                     {"memory_per_sandbox_bytes", mem.back().to_json()},
                     {"destroyed_per_second", teardown_s > 0 ? double(alive) / teardown_s : 0}};
    rec["memory_samples"] = json::array();
    for (auto& s : mem) rec["memory_samples"].push_back(s.to_json());
    rec.update(bench::density_latency(ms, alive), true);
    if (!probe_end.create_ms.empty()) {
        // The same figures and ratio for the probes' creates and their destroys.
        auto at = [&](const char* what, const std::vector<double>& base, const std::vector<double>& end,
                      const std::string& ratio) {
            std::string w(what);
            rec["figures"][w + "_ms_at_" + std::to_string(base_alive)] = bench::summarize(base).to_json("ms");
            rec["figures"][w + "_ms_at_" + std::to_string(alive)] = bench::summarize(end).to_json("ms");
            double b = bench::median(base);
            rec["ratios"][ratio] = {
                {"median", b > 0 ? bench::median(end) / b : 0},
                {"means", "median of " + std::to_string(probes) + " " + w + "s with " + std::to_string(alive) +
                              " alive over that of " + std::to_string(probes) + " with " + std::to_string(base_alive) +
                              " alive (each probe destroyed at once, so the number alive holds)"}};
        };
        at("create", probe_base.create_ms, probe_end.create_ms, "at_count/at_10");
        at("destroy", probe_base.destroy_ms, probe_end.destroy_ms, "destroy_at_count/at_10");
    }
    rec["baselines"]["dsec"] = {
        {"does", dsec_does("dsec-run create --layers LAYER --memcg " + ctx.opt.memcg + ", one at a time, left idle")}};
    if (!ctx.opt.plot.empty()) {
        if (auto r = plot_density(ctx, latency, mem); !r) return r;
        rec["plot"] = ctx.opt.plot;
    }
    return jsonl::emit(rec);
}

}  // namespace

void add_create(CLI::App& app, Context& ctx) {
    auto* create = app.add_subcommand("create", "sandboxes created per second and create latency at concurrency -P");
    create->footer(cli::example("  dsec-bench create -n 100 -P 4 | jq .counts.created_per_second"));
    add_options(create, ctx.opt, {"n", "warmup", "P", "scale", "plot", "tree", "use-state"});
    create->callback([&ctx] {
        ctx.action = [&ctx]() -> Result<int> {
            if (auto r = prepare(ctx); !r) return fail(r.error());
            if (auto r = run_create(ctx); !r) return fail(r.error());
            return 0;
        };
    });

    auto* density = app.add_subcommand(
        "density", "idle sandboxes up to --count or --memory-budget: memory per sandbox, latency against alive");
    density->footer(cli::example("  dsec-bench density --count 1000 --raise-limits --plot density.svg\n"
                                 "  dsec-bench density --count 1000 --memcg shared | jq .memory_samples"));
    add_options(density, ctx.opt,
                {"count", "n", "warmup", "memory-budget", "raise-limits", "memcg", "scale", "plot", "tree", "use-state"});
    density->callback([&ctx] {
        ctx.action = [&ctx]() -> Result<int> {
            if (auto r = prepare(ctx); !r) return fail(r.error());
            if (auto r = run_density(ctx); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::bench_tool
