// dsec-bench compare, run and exec: latency of one-shot commands and of exec into live
// sandboxes, interleaved with bubblewrap, runc and a plain fork/exec.
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "dsec/bench/spawn.h"
#include "dsec/json/jsonl.h"
#include "dsec/sandbox/pool.h"
#include "dsec/sys/fs.h"
#include "commands.h"

namespace dsec::bench_tool {

namespace {

// One timed run of argv; a non-zero exit is a failure of the variant.
Result<double> timed(const std::vector<std::string>& argv) {
    auto ran = bench::spawn_checked(argv);
    if (!ran) return fail(ran.error());
    return ran->ms;
}

Variant fork_exec_variant(const Context& ctx) {
    std::string bin = ctx.tree + "/bin/true";
    return {"fork-exec",
            {{"how", "posix_spawn of the tree's /bin/true on the host, no isolation: the floor"},
             {"namespaces", json::array()}, {"cgroups", "none"}, {"root", "host"}, {"network", "host"}},
            [bin](size_t) { return timed({bin}); }, {}, {}};
}

Variant dsec_run_variant(Context& ctx) {
    Variant v{"dsec", dsec_does("dsec-run run --layers LAYER -- /bin/true (one-shot: create, exec, destroy)"), {}, {}, {}};
    auto t = DsecTools::find();
    auto layer = dsec_ready(ctx, t, "run");
    if (!layer) {
        v.unavailable = layer.error().describe();
        return v;
    }
    v.once = [t, l = *layer](size_t) { return timed({t.run, "run", "--layers", l, "--", "/bin/true"}); };
    return v;
}

// The pooled variant's size: enough that a run always finds one ready.
constexpr const char* kPoolSize = "4";

// The run directory dsec-run sees (the workspace's, when private).
sandbox::Paths run_paths(const Context& ctx) {
    dsec::Paths p = ctx.paths;
    if (const char* run = std::getenv("DSEC_RUN")) p.run = run;
    if (const char* root = std::getenv("DSEC_ROOT")) p.root = root;
    return sandbox::Paths(p);
}

// Waits until no background teardown or refill of the pool is at work and it is full
// again, reading its directory (no process per poll). Errors: busy after 60 s.
Status settle_pool(const sandbox::Paths& paths, const std::string& key) {
    auto at = sandbox::pool::at(paths, key);
    for (int i = 0; i < 60000; i++) {
        auto c = sandbox::pool::census(at);
        if (c && c->making.empty() && c->claimed.empty() && c->ready.size() >= c->size) return {};
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return fail(make_error(Code::busy, "pool " + key + " did not refill within 60 s", at.dir));
}

// dsec-run run --pool: the sandbox is drawn from ones made ahead. The drawn sandbox's
// teardown and the refill run in the background after each run; the variant waits for
// them after its timing, so they load no other variant's run (and are in no timing: the
// record says so).
Variant dsec_pool_variant(Context& ctx, std::string& pool_key) {
    Variant v{"dsec-pool",
              dsec_does(std::string("dsec-run run --pool ") + kPoolSize +
                        " --layers LAYER -- /bin/true (drawn from sandboxes made ahead with the same options; "
                        "its teardown and the refill run in the background after the run, and are waited for "
                        "outside the timing)"),
              {}, {}, {}};
    auto t = DsecTools::find();
    auto layer = dsec_ready(ctx, t, "pool");
    if (!layer) {
        v.unavailable = layer.error().describe();
        return v;
    }
    auto filled = bench::spawn_checked({t.run, "pool", "fill", "-n", kPoolSize, "--layers", *layer}, {.capture_stdout = true});
    json rec = filled ? json::parse(bench::last_line(filled->out), nullptr, false) : json();
    if (!filled || !rec.is_object() || !rec.contains("key")) {
        v.unavailable = filled ? "dsec-run pool fill printed no pool record" : filled.error().describe();
        return v;
    }
    pool_key = rec["key"].get<std::string>();
    v.once = [t, l = *layer, paths = run_paths(ctx), key = pool_key](size_t) -> Result<double> {
        auto ms = timed({t.run, "run", "--pool", kPoolSize, "--layers", l, "--", "/bin/true"});
        if (!ms) return ms;
        if (auto s = settle_pool(paths, key); !s) return fail(s.error());
        return ms;
    };
    return v;
}

// Execs per batch of the batched exec variant.
constexpr size_t kBatchExecs = 20;

// dsec-run exec -P 1 --json -- /bin/true with kBatchExecs sandbox records on stdin (the
// live sandboxes round robin): what a job that pipes records pays per exec, dsec-run's
// own start shared by the batch. One sample is the batch's wall time over its execs;
// a batch with any result not a clean exit fails the variant.
Variant exec_batch_variant(const Sandboxes& boxes, const std::vector<std::string>& records) {
    Variant v{"dsec-batch",
              dsec_does("dsec-run exec -P 1 --json -- /bin/true with " + std::to_string(kBatchExecs) +
                        " sandbox records on stdin, one after another in one dsec-run process; the time per exec"),
              {}, {}, {}};
    if (records.empty()) {
        v.unavailable = "no live sandboxes";
        return v;
    }
    std::string input;
    for (size_t i = 0; i < kBatchExecs; i++) input += records[i % records.size()];
    v.once = [run = boxes.tools.run, input](size_t) -> Result<double> {
        auto ran = bench::spawn_checked({run, "exec", "-P", "1", "--json", "--", "/bin/true"},
                                        {.input = input, .capture_stdout = true});
        if (!ran) return fail(ran.error());
        size_t ok = 0;
        std::istringstream out(ran->out);
        for (std::string line; std::getline(out, line);) {
            json r = json::parse(line, nullptr, false);
            ok += r.is_object() && r.value("exit_code", -1) == 0;
        }
        if (ok != kBatchExecs)
            return fail(make_error(Code::helper_failed, std::to_string(ok) + " of " + std::to_string(kBatchExecs) +
                                                            " execs of a batch exited 0"));
        return ran->ms / double(kBatchExecs);
    };
    return v;
}

// Destroys the pooled variant's sandboxes once its last teardown is done.
void drain_pool(const Context& ctx, const std::string& key) {
    if (key.empty()) return;
    (void)settle_pool(run_paths(ctx), key);
    (void)bench::spawn({DsecTools::find().run, "pool", "drain", key});
}

Variant bwrap_variant(const Context& ctx) {
    Variant v{"bwrap",
              {{"how", "bwrap --unshare-all --die-with-parent --ro-bind TREE / --proc /proc --dev /dev /bin/true"},
               {"namespaces", {"user", "mount", "pid", "net", "ipc", "uts", "cgroup"}},
               {"cgroups", "none"},
               {"root", "the tree, bind-mounted read-only; no overlay, no writable upper"},
               {"network", "none (private loopback)"}},
              {}, {}, {}};
    if (bench::find_tool("bwrap").empty()) {
        v.unavailable = "bwrap is not installed (Debian: bubblewrap)";
        return v;
    }
    v.once = [argv = bwrap_argv(ctx.tree, {"/bin/true"})](size_t) { return timed(argv); };
    return v;
}

// An OCI bundle for the tree: `runc spec`, then the edits jq would make (root path,
// read-only root, args, no terminal) done with nlohmann.
Result<json> make_runc_bundle(const std::string& bundle, const std::string& tree) {
    if (auto r = bench::spawn_checked({"runc", "spec", "--bundle", bundle}); !r) return fail(r.error());
    auto text = fs::read_file(bundle + "/config.json");
    if (!text) return fail(text.error());
    json spec = json::parse(*text, nullptr, false);
    if (spec.is_discarded()) return fail(make_error(Code::bad_input, "runc spec wrote no JSON", bundle + "/config.json"));
    spec["root"] = {{"path", tree}, {"readonly", true}};
    spec["process"]["args"] = {"/bin/true"};
    spec["process"]["terminal"] = false;
    if (auto r = fs::atomic_write(bundle + "/config.json", spec.dump(2)); !r) return fail(r.error());
    return spec;
}

Variant runc_variant(const Context& ctx) {
    Variant v{"runc", {{"how", "runc run --bundle B ID (bundle from runc spec, root = the tree, read-only)"}}, {}, {}, {}};
    if (bench::find_tool("runc").empty()) {
        v.unavailable = "runc is not installed (Debian: runc)";
        return v;
    }
    std::string bundle = ctx.ws->dir() + "/runc-bundle", state = ctx.ws->dir() + "/runc-state";
    (void)fs::mkdir_p(bundle);
    auto spec = make_runc_bundle(bundle, ctx.tree);
    if (!spec) {
        v.unavailable = spec.error().describe();
        return v;
    }
    json ns = json::array();
    for (auto& n : spec->value("/linux/namespaces"_json_pointer, json::array())) ns.push_back(n.value("type", ""));
    v.does["namespaces"] = ns;
    v.does["cgroups"] = "a cgroup per container (runc's cgroupfs driver, no limits set)";
    v.does["root"] = "the tree itself, read-only (pivot_root); no overlay, no writable upper";
    v.does["network"] = "none (new network namespace, loopback down)";
    // runc keeps container state in --root: private to the workspace, not /run/runc.
    std::string prefix = "dsec-bench-" + std::to_string(::getpid()) + "-";
    v.once = [bundle, state, prefix](size_t i) {
        return timed({"runc", "--root", state, "run", "--bundle", bundle, prefix + std::to_string(i)});
    };
    return v;
}

Status finish(const Context& ctx, json rec, const std::vector<Variant>& variants, const std::string& subject,
              const std::string& title) {
    add_variants(rec, variants, subject);
    if (auto r = plot_cdfs(ctx, variants, title); !r) return r;
    if (!ctx.opt.plot.empty()) rec["plot"] = ctx.opt.plot;
    return jsonl::emit(rec);
}

}  // namespace

void add_compare(CLI::App& app, Context& ctx) {
    auto* compare = app.add_subcommand(
        "compare", "one-shot /bin/true in a fresh sandbox from the same tree: dsec vs bwrap vs runc, interleaved");
    compare->footer(cli::example("  dsec-bench compare -n 30 --plot compare.svg | jq .ratios"));
    add_options(compare, ctx.opt, {"n", "warmup", "pause", "scale", "plot", "tree", "use-state"});
    compare->callback([&ctx] {
        ctx.action = [&ctx]() -> Result<int> {
            if (auto r = prepare(ctx); !r) return fail(r.error());
            size_t n = ctx.iterations(20);
            std::string pool_key;
            std::vector<Variant> vs{dsec_run_variant(ctx), dsec_pool_variant(ctx, pool_key), bwrap_variant(ctx),
                                    runc_variant(ctx)};
            auto rec = new_record("compare", "one-shot /bin/true in a fresh sandbox started from the same tree, "
                                             "under dsec (made on the spot, and drawn from a warm pool), bwrap "
                                             "and runc, run alternately, each round starting one further along (A B C D, B C D A, ...)");
            rec["counts"] = {{"iterations", n}, {"warmup", ctx.opt.warmup}, {"pause_ms", ctx.opt.pause_ms}};
            auto ran = interleave(vs, n, ctx.opt.warmup, "compare", ctx.opt.pause_ms);
            drain_pool(ctx, pool_key);
            if (!ran) return fail(ran.error());
            add_variants(rec, vs, "dsec-pool");
            if (auto r = finish(ctx, rec, vs, "dsec", "one-shot /bin/true: latency CDF"); !r) return fail(r.error());
            return 0;
        };
    });

    auto* run = app.add_subcommand("run", "one-shot latency of dsec-run run -- /bin/true, against a plain fork/exec");
    run->footer(cli::example("  dsec-bench run -n 50 | jq .ratios"));
    add_options(run, ctx.opt, {"n", "warmup", "pause", "scale", "plot", "tree", "use-state"});
    run->callback([&ctx] {
        ctx.action = [&ctx]() -> Result<int> {
            if (auto r = prepare(ctx); !r) return fail(r.error());
            size_t n = ctx.iterations(20);
            std::vector<Variant> vs{dsec_run_variant(ctx), fork_exec_variant(ctx)};
            auto rec = new_record("run", "dsec-run run --layers LAYER -- /bin/true (a sandbox made, used once, "
                                         "destroyed), alternating with a plain fork/exec of the same binary");
            rec["counts"] = {{"iterations", n}, {"warmup", ctx.opt.warmup}, {"pause_ms", ctx.opt.pause_ms}};
            if (auto r = interleave(vs, n, ctx.opt.warmup, "run", ctx.opt.pause_ms); !r) return fail(r.error());
            if (auto r = finish(ctx, rec, vs, "dsec", "dsec-run run: latency CDF"); !r) return fail(r.error());
            return 0;
        };
    });

    auto* exec = app.add_subcommand(
        "exec", "latency of dsec-run exec into live sandboxes (a process per exec, and batched), against a plain fork/exec");
    exec->footer(cli::example("  dsec-bench exec -n 50 --count 4 | jq .ratios"));
    add_options(exec, ctx.opt, {"n", "warmup", "pause", "count", "scale", "plot", "tree", "use-state"});
    exec->callback([&ctx] {
        ctx.action = [&ctx]() -> Result<int> {
            if (auto r = prepare(ctx); !r) return fail(r.error());
            size_t n = ctx.iterations(40);
            size_t live = ctx.opt.count ? ctx.opt.count : 2;
            Sandboxes boxes{DsecTools::find(), {}, {}};
            Variant dsec{"dsec", dsec_does("dsec-run exec ID -- /bin/true into live idle sandboxes, round robin"),
                         {}, {}, {}};
            auto layer = dsec_ready(ctx, boxes.tools, "exec");
            if (!layer) dsec.unavailable = layer.error().describe();
            std::vector<std::string> records;  // the live sandboxes' records, for the batch
            for (size_t i = 0; layer && i < live && dsec.unavailable.empty(); i++) {
                auto rec = create_sandbox(boxes.tools, *layer);
                if (!rec) dsec.unavailable = rec.error().describe();
                else boxes.add(*rec), records.push_back(rec->dump() + "\n");
            }
            dsec.once = [&boxes](size_t i) {
                return timed({boxes.tools.run, "exec", boxes.ids[i % boxes.ids.size()], "--", "/bin/true"});
            };
            Variant batch = exec_batch_variant(boxes, records);
            if (!dsec.unavailable.empty()) batch.unavailable = dsec.unavailable;
            std::vector<Variant> vs{std::move(dsec), std::move(batch), fork_exec_variant(ctx)};
            auto rec = new_record("exec", "dsec-run exec into live sandboxes (one process per exec, as a script "
                                          "would; and one process for a batch of records), alternating with a "
                                          "plain fork/exec of the same binary");
            rec["counts"] = {{"iterations", n}, {"warmup", ctx.opt.warmup}, {"pause_ms", ctx.opt.pause_ms}, {"live_sandboxes", boxes.ids.size()},
                             {"batch_execs", kBatchExecs}};
            if (auto r = interleave(vs, n, ctx.opt.warmup, "exec", ctx.opt.pause_ms); !r) return fail(r.error());
            if (auto r = boxes.destroy(); !r) return fail(r.error());
            add_variants(rec, vs, "dsec-batch");
            if (auto r = finish(ctx, rec, vs, "dsec", "exec into a live sandbox: latency CDF"); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::bench_tool
