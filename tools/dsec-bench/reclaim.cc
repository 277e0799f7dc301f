// dsec-bench reclaim: host memory held by idle sandboxes that each touched memory (half
// of it the same in every sandbox) as created, once KSM merged it and once `dsec-reclaim
// idle` paused them; the first exec's latency into a paused sandbox; a gc pass's cost.
#include <algorithm>
#include <iostream>
#include <optional>
#include <thread>

#include "dsec/bench/memory.h"
#include "dsec/bench/reclaim.h"
#include "dsec/json/jsonl.h"
#include "dsec/reclaim/ksm.h"
#include "dsec/reclaim/swap.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sys/fs.h"
#include "commands.h"

namespace dsec::bench_tool {

namespace {

constexpr const char* kKsm = "/sys/kernel/mm/ksm";
constexpr uint64_t kMiB = 1 << 20;
// What a sandbox costs besides what it touches (init, cgroups, overlay; density: < 1 MiB).
constexpr uint64_t kOverhead = 2 * kMiB;
constexpr size_t kBatch = 50;
// ksmd's rate while the benchmark waits for it: 4000 pages every 10 ms (one core at most).
const bench::KsmSettings kKsmFast{"", "4000", "10"};

struct ReclaimOptions {
    std::string touch = "20M", fill = "text", keep_free = "2G";
    bool no_ksm = false;
    int64_t ksm_wait_s = 600;
};

// Host memory the sandboxes hold, three ways.
struct Held {
    uint64_t memavailable_fall = 0, cgroup = 0, zram = 0;
    json to_json(size_t n) const {
        uint64_t held = cgroup + zram;
        return {{"memavailable_fall", memavailable_fall}, {"cgroup_charge", cgroup}, {"zram_used", zram},
                {"held", held}, {"held_per_sandbox", n ? held / n : 0},
                {"memavailable_fall_per_sandbox", n ? memavailable_fall / n : 0}};
    }
};

Held held(const bench::HostMemory& baseline, const Sandboxes& boxes) {
    Held h;
    if (auto now = bench::host_memory(); now && baseline.available > now->available)
        h.memavailable_fall = baseline.available - now->available;
    for (int pid : boxes.pids)
        if (auto c = bench::cgroup_memory_of(pid)) h.cgroup += *c;
    h.zram = reclaim::zram_status().value("used", uint64_t(0));
    return h;
}

double ratio(uint64_t a, uint64_t b) { return b ? double(a) / double(b) : 0; }

// Sandbox records for `dsec-run exec`'s stdin.
std::string records(const std::vector<std::string>& ids) {
    std::string out;
    for (auto& id : ids) out += json{{"type", "sandbox"}, {"v", 1}, {"id", id}}.dump() + "\n";
    return out;
}

// Runs the touch command in every sandbox of `ids`, P at a time. Errors: a failed exec.
Status touch_all(const DsecTools& t, const std::vector<std::string>& ids, size_t parallel, const std::string& cmd) {
    auto ran = bench::spawn({t.run, "exec", "-P", std::to_string(parallel), "--json", "--", "sh", "-c", cmd},
                            {.input = records(ids), .capture_stdout = true});
    if (!ran) return fail(ran.error());
    if (ran->status != 0)
        return fail(make_error(Code::helper_failed, "touching memory in the sandboxes failed: " +
                                                    bench::last_line(ran->err_tail + "\n" + ran->out)));
    return {};
}

// zram swap for the run when the host has no swap; turned off again on every path out,
// after the sandboxes are gone (swapoff would otherwise pull all they pushed out back
// into RAM at once).
struct ZramForRun {
    std::string reclaim;
    Sandboxes& boxes;
    bool on = false;
    ~ZramForRun() {
        (void)boxes.destroy();
        if (on) (void)bench::spawn({reclaim, "swap", "--off"});
    }
};

// Starts ksmd at kKsmFast and waits until pages_sharing holds still (within 1%) over two
// full scans.
// Returns {"seconds", "full_scans", "settled"}.
Result<json> merge(const std::string& reclaim, int64_t wait_s) {
    if (auto r = bench::write_ksm_settings(kKsm, kKsmFast); !r) return fail(r.error());
    auto number = [](const char* name) {
        auto text = fs::read_file(std::string(kKsm) + "/" + name);
        return text ? std::strtoull(text->c_str(), nullptr, 10) : 0ULL;
    };
    uint64_t scans0 = number("full_scans"), last = 0, settled_at = 0;
    double start = bench::now_ms();
    if (auto r = bench::spawn_checked({reclaim, "ksm", "on"}); !r) return fail(r.error());
    bool settled = false;
    while (bench::now_ms() - start < double(wait_s) * 1000) {
        if (cli::interrupted()) return fail(cli::interrupted_error());
        std::this_thread::sleep_for(std::chrono::seconds(1));
        uint64_t sharing = number("pages_sharing"), scans = number("full_scans");
        // Other mergeable processes on the host move it a little: under 1% is still.
        uint64_t moved = sharing > last ? sharing - last : last - sharing;
        if (sharing == 0 || moved * 100 > last) {
            last = sharing;
            settled_at = scans;
            continue;
        }
        if (scans >= settled_at + 2 && scans >= scans0 + 2) {
            settled = true;
            break;
        }
    }
    return json{{"seconds", (bench::now_ms() - start) / 1000}, {"full_scans", number("full_scans") - scans0},
                {"settled", settled}};
}

// `dsec-reclaim idle --after 0s` until every sandbox is paused (a sandbox whose sleep woke
// during the CPU sample waits for the next pass, as under cron); at most three passes.
Result<json> pause_all(const std::string& reclaim, size_t n) {
    size_t paused = 0, passes = 0;
    double start = bench::now_ms();
    while (paused < n && passes < 3) {
        auto ran = bench::spawn_checked({reclaim, "idle", "--after", "0s", "--sample", "1s"}, {.capture_stdout = true});
        if (!ran) return fail(ran.error());
        passes++;
        for (size_t at = 0; (at = ran->out.find("\"paused\"", at)) != std::string::npos; at++) paused++;
    }
    return json{{"ms", bench::now_ms() - start}, {"passes", passes}, {"paused", paused}};
}

// One `dsec-run exec ID -- true` per sandbox, one after the other; their times (ms).
Result<std::vector<double>> exec_each(const DsecTools& t, const std::vector<std::string>& ids) {
    std::vector<double> ms;
    cli::Progress bar("exec", ids.size());
    for (auto& id : ids) {
        if (cli::interrupted()) return fail(cli::interrupted_error());
        auto ran = bench::spawn_checked({t.run, "exec", id, "--", "true"});
        if (!ran) return fail(ran.error());
        ms.push_back(ran->ms);
        bar.add(1);
    }
    return ms;
}

// Three gc passes over the live sandboxes; each must find nothing to remove.
Result<std::vector<double>> gc_passes(const std::string& reclaim) {
    std::vector<double> ms;
    for (int i = 0; i < 3; i++) {
        auto ran = bench::spawn_checked({reclaim, "gc"}, {.capture_stdout = true});
        if (!ran) return fail(ran.error());
        if (!ran->out.empty())
            return fail(make_error(Code::helper_failed, "gc removed something of live sandboxes: " + bench::last_line(ran->out)));
        ms.push_back(ran->ms);
    }
    return ms;
}

Status run_reclaim(Context& ctx, const ReclaimOptions& o) {
    Sandboxes boxes{DsecTools::find(), {}, {}};
    const DsecTools& t = boxes.tools;
    std::string reclaim = bench::find_tool("dsec-reclaim");
    if (reclaim.empty() || t.mount.empty() || t.run.empty())
        return fail(make_error(Code::not_found, "dsec-reclaim, dsec-mount and dsec-run must be built", "dsec-reclaim"));
    auto fill = bench::parse_fill(o.fill);
    if (!fill) return fail(fill.error());
    auto touch = sandbox::parse_size(o.touch);
    if (!touch) return fail(touch.error());
    auto keep_free = sandbox::parse_size(o.keep_free);
    if (!keep_free) return fail(keep_free.error());
    uint64_t shared = *touch / 2, own = *touch - shared;
    size_t n = ctx.opt.count ? ctx.opt.count : ctx.scaled(20), parallel = ctx.opt.parallel ? ctx.opt.parallel : 2;

    // The shared half is a file of the layer, so every sandbox reads the same bytes.
    if (auto r = fs::mkdir_p(ctx.tree + "/data"); !r) return r;
    if (auto r = bench::write_fill(ctx.tree + "/data/shared", *fill, shared); !r) return r;
    auto layer = ensure_layer(ctx);
    if (!layer) return fail(layer.error());
    std::string cmd = bench::touch_command(*fill, shared, own, "/data/shared");
    std::vector<std::string> create_opts{"--memory", std::to_string(*touch + 64 * kMiB)};

    auto rec = new_record("reclaim", "idle sandboxes that each touched --touch bytes (half of it the same file in "
                                     "every sandbox, half their own --fill): host memory they hold as created, "
                                     "once KSM merged them and once dsec-reclaim idle paused them; first exec "
                                     "into a paused sandbox; a dsec-reclaim gc pass over them alive");
    // KSM's knobs as they were, put back on every path out; ksmd stopped for the baseline.
    std::optional<bench::KsmRestore> ksm_restore;
    auto ksm_before = bench::read_ksm_settings(kKsm);
    if (ksm_before) {
        ksm_restore.emplace(kKsm, *ksm_before);
        if (auto r = bench::write_ksm_settings(kKsm, {"0", "", ""}); !r) return r;
    }
    ZramForRun zram{reclaim, boxes};
    auto swaps = fs::read_file("/proc/swaps");
    bool host_swap = swaps && std::count(swaps->begin(), swaps->end(), '\n') > 1;
    if (!host_swap) {
        // zram allocates only what it stores: room for all of it, uncompressed.
        if (auto r = bench::spawn_checked({reclaim, "swap", "--zram", std::to_string(std::max<uint64_t>(n * *touch, 256 * kMiB))}); !r)
            return fail(r.error());
        zram.on = true;
    }

    // Warm-up: the layer's mount and the tools' caches are in place before the baseline.
    if (auto w = create_batch(boxes, *layer, 1, 1, create_opts); !w) return fail(w.error());
    if (auto r = boxes.destroy(); !r) return r;
    auto baseline = bench::host_memory();
    if (!baseline) return fail(baseline.error());

    // Batches, each only when the host keeps --keep-free of MemAvailable after it.
    std::string stopped = "count";
    cli::Progress bar("touch", n);
    for (size_t done = 0; done < n;) {
        if (cli::interrupted()) return fail(cli::interrupted_error());
        size_t b = std::min(kBatch, n - done);
        auto now = bench::host_memory();
        if (!now) return fail(now.error());
        if (!bench::room_for(now->available, b * (*touch + kOverhead), *keep_free)) {
            stopped = "host memory guard: " + std::to_string(b) + " more would leave MemAvailable (" +
                      std::to_string(now->available / kMiB) + " MiB) under --keep-free";
            // With none made the error record says it; otherwise the run goes on with those.
            if (done) std::cerr << "dsec-bench: stopped at " << done << " sandboxes: " << stopped << "\n";
            break;
        }
        size_t first = boxes.ids.size();
        if (auto r = create_batch(boxes, *layer, b, parallel, create_opts); !r) return fail(r.error());
        std::vector<std::string> batch(boxes.ids.begin() + long(first), boxes.ids.end());
        if (auto r = touch_all(t, batch, parallel, cmd); !r) return r;
        done += b;
        bar.set(done);
    }
    size_t alive = boxes.ids.size();
    if (!alive) return fail(make_error(Code::exhausted, "not enough memory for a single batch: " + stopped));

    Held created = held(*baseline, boxes), merged, paused;
    json ksm = json::object();
    if (o.no_ksm) {
        ksm["unavailable"] = "--no-ksm";
    } else if (!ksm_before) {
        ksm["unavailable"] = ksm_before.error().describe();
    } else {
        auto m = merge(reclaim, o.ksm_wait_s);
        if (!m) return fail(m.error());
        ksm = *m;
        ksm["settings_before"] = ksm_before->to_json();
        ksm["settings_used"] = {{"pages_to_scan", 4000}, {"sleep_millisecs", 10}};
        ksm["status"] = reclaim::ksm_status();
        merged = held(*baseline, boxes);
    }
    auto idle = pause_all(reclaim, alive);
    if (!idle) return fail(idle.error());
    paused = held(*baseline, boxes);
    json zram_now = reclaim::zram_status();
    // ksmd off again: its scanning would slow the exec probes down.
    if (ksm_before)
        if (auto r = bench::write_ksm_settings(kKsm, {"0", "", ""}); !r) return r;
    auto first_exec = exec_each(t, boxes.ids);
    if (!first_exec) return fail(first_exec.error());
    auto warm_exec = exec_each(t, boxes.ids);
    if (!warm_exec) return fail(warm_exec.error());
    auto gc = gc_passes(reclaim);
    if (!gc) return fail(gc.error());
    if (auto r = boxes.destroy(); !r) return r;

    rec["counts"] = {{"sandboxes", alive}, {"requested", n}, {"stopped_by", stopped},
                     {"touch_bytes", *touch}, {"shared_bytes", shared}, {"own_bytes", own},
                     {"fill", bench::fill_name(*fill)}, {"parallel", parallel},
                     {"keep_free_bytes", *keep_free}, {"swap", host_swap ? "the host's" : "zram set up for the run"}};
    // Order statistics go to "figures"; the memory accounts beside them.
    rec["memory"] = {{"created", created.to_json(alive)}, {"paused", paused.to_json(alive)}};
    if (!ksm.contains("unavailable")) rec["memory"]["ksm_merged"] = merged.to_json(alive);
    rec["ksm"] = ksm;
    rec["idle"] = *idle;
    rec["zram"] = zram_now;
    rec["figures"]["first_exec_after_pause_ms"] = bench::summarize(*first_exec).to_json("ms");
    rec["figures"]["exec_running_ms"] = bench::summarize(*warm_exec).to_json("ms");
    rec["figures"]["gc_pass_ms"] = bench::summarize(*gc).to_json("ms");
    auto hold_ratio = [&](const Held& h) {
        return json{{"held", ratio(h.cgroup + h.zram, created.cgroup + created.zram)},
                    {"memavailable_fall", ratio(h.memavailable_fall, created.memavailable_fall)}};
    };
    rec["ratios"]["paused/created"] = hold_ratio(paused);
    rec["ratios"]["paused/created"]["means"] =
        "held: the sandboxes' memory cgroups' charge plus the zram device's memory; memavailable_fall: the fall of "
        "MemAvailable since before the first sandbox (other processes on the host move it too)";
    if (!ksm.contains("unavailable")) rec["ratios"]["ksm_merged/created"] = hold_ratio(merged);
    rec["baselines"]["dsec"] = {{"does", dsec_does("dsec-layer ls | dsec-mount --count B | dsec-run create -P P "
                                                   "--memory TOUCH+64M, then dsec-run exec -P P -- sh -c TOUCH")}};
    return jsonl::emit(rec);
}

}  // namespace

void add_reclaim(CLI::App& app, Context& ctx) {
    auto o = std::make_shared<ReclaimOptions>();
    auto* cmd = app.add_subcommand(
        "reclaim", "memory held by idle sandboxes as created, with KSM and paused; first exec after a pause; gc cost");
    cmd->footer(cli::example("  dsec-bench reclaim --count 250 --touch 20M --fill text | jq .ratios"));
    add_options(cmd, ctx.opt, {"count", "P", "scale"});
    cmd->add_option("--touch", o->touch, "memory each sandbox touches, half of it the same in all (default 20M)");
    cmd->add_option("--fill", o->fill, "what the sandbox's own half holds: text or random")
        ->check(CLI::IsMember({"text", "random"}))->capture_default_str();
    cmd->add_option("--keep-free", o->keep_free, "touch no more once MemAvailable would fall under this (default 2G)");
    cmd->add_flag("--no-ksm", o->no_ksm, "leave KSM out: memory as created and paused only");
    cmd->add_option("--ksm-wait", o->ksm_wait_s, "seconds to wait at most for KSM to merge (default 600)")
        ->check(CLI::Range(1, 86400));
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            if (auto r = prepare(ctx); !r) return fail(r.error());
            if (auto r = run_reclaim(ctx, *o); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::bench_tool
