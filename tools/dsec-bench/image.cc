// dsec-bench image: start a sandbox and read a few files of a large image, three ways:
// on-demand EROFS layers (dsec), extracting the image's tar per sandbox, copying the
// tree per sandbox (cp -a). Time, bytes read and written, disk used.
#include <fcntl.h>

#include <fstream>

#include "dsec/bench/plot.h"
#include "dsec/json/jsonl.h"
#include "dsec/sys/fs.h"
#include "commands.h"

namespace dsec::bench_tool {

namespace {

// rchar and wchar of this process, which include every child it reaped (the kernel adds
// a reaped child's I/O accounting to its parent's).
std::pair<double, double> io_now() {
    auto text = fs::read_file("/proc/self/io");
    if (!text) return {0, 0};
    auto m = bench::parse_meminfo(*text);
    return {double(m["rchar"]), double(m["wchar"])};
}

// Deterministic, partly compressible file content (like source and data files).
std::string filler(size_t size, uint64_t seed) {
    std::string out(size, ' ');
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < size; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        out[i] = (x & 3) ? "etaoinshrdlu \n"[x % 14] : char(33 + (x >> 8) % 90);
    }
    return out;
}

}  // namespace

/// Writes `files` files of `size` bytes under `dir`/data/NN/, returns their paths
/// relative to `dir`. Shared with import.
Result<std::vector<std::string>> make_data_tree(const std::string& dir, size_t files, size_t size) {
    std::vector<std::string> rel;
    cli::Progress bar("making data", files);
    for (size_t i = 0; i < files; i++) {
        std::string sub = "data/" + std::to_string(i % 64);
        if (auto r = fs::mkdir_p(dir + "/" + sub); !r) return fail(r.error());
        std::string name = sub + "/f" + std::to_string(i);
        std::ofstream out(dir + "/" + name, std::ios::binary);
        out << filler(size, i);
        if (!out) return fail(make_error(Code::io, "cannot write", dir + "/" + name));
        rel.push_back(name);
        bar.set(i + 1);
    }
    return rel;
}

namespace {

// A variant's run: `start` makes the sandbox and reads the files (timed), `disk` says
// how many bytes it put on disk, `cleanup` removes it (not timed).
Variant io_variant(std::string name, json does, std::function<Result<std::string>(size_t)> start,
                   std::function<Status(const std::string&)> cleanup, std::function<uint64_t(const std::string&)> disk) {
    Variant v{std::move(name), std::move(does), {}, {}, {}};
    v.once = [start, cleanup, disk, extra = v.extra](size_t i) -> Result<double> {
        auto [r0, w0] = io_now();
        double t0 = bench::now_ms();
        auto handle = start(i);
        double ms = bench::now_ms() - t0;
        auto [r1, w1] = io_now();
        if (!handle) return fail(handle.error());
        (*extra)["read_bytes"].push_back(r1 - r0);
        (*extra)["written_bytes"].push_back(w1 - w0);
        (*extra)["disk_bytes"].push_back(double(disk(*handle)));
        if (auto r = cleanup(*handle); !r) return fail(r.error());
        return ms;
    };
    return v;
}

std::vector<std::string> cat_argv(const std::vector<std::string>& files) {
    std::vector<std::string> argv{"/bin/cat"};
    for (auto& f : files) argv.push_back("/" + f);
    return argv;
}

Status run_image(Context& ctx) {
    size_t nfiles = ctx.scaled(2000, 16), size = 32 * 1024, nread = ctx.opt.files ? ctx.opt.files : 20;
    size_t n = ctx.iterations(10);
    std::string big = ctx.ws->dir() + "/image-tree", tar = ctx.ws->dir() + "/image.tar";
    if (auto r = bench::make_busybox_tree(big); !r) return r;
    auto rel = make_data_tree(big, nfiles, size);
    if (!rel) return fail(rel.error());
    std::vector<std::string> reads;
    for (size_t i = 0; i < std::min(nread, rel->size()); i++) reads.push_back((*rel)[i * rel->size() / nread]);
    if (auto r = bench::spawn_checked({"tar", "-cf", tar, "-C", big, "."}); !r) return fail(r.error());
    auto cat = cat_argv(reads);
    auto t = DsecTools::find();

    auto rm = [](const std::string& dir) { return fs::remove_tree(dir); };
    auto du = [](const std::string& dir) { return bench::disk_usage(dir); };
    std::string work = ctx.ws->dir() + "/image-runs";
    auto tar_start = [&, tar](size_t i) -> Result<std::string> {
        std::string d = work + "/tar-" + std::to_string(i);
        if (auto r = fs::mkdir_p(d); !r) return fail(r.error());
        if (auto r = bench::spawn_checked({"tar", "-xf", tar, "-C", d}); !r) return fail(r.error());
        if (auto r = bench::spawn_checked(bwrap_argv(d, cat)); !r) return fail(r.error());
        return d;
    };
    auto cp_start = [&, big](size_t i) -> Result<std::string> {
        std::string d = work + "/cp-" + std::to_string(i);
        if (auto r = bench::spawn_checked({"cp", "-a", big, d}); !r) return fail(r.error());
        if (auto r = bench::spawn_checked(bwrap_argv(d, cat)); !r) return fail(r.error());
        return d;
    };
    json bw = {{"namespaces", {"user", "mount", "pid", "net", "ipc", "uts", "cgroup"}}, {"cgroups", "none"},
               {"network", "none (private loopback)"}};
    json tar_does = bw, cp_does = bw;
    tar_does["how"] = "tar -xf IMAGE.tar -C DIR, then bwrap --ro-bind DIR / ... cat FILES";
    tar_does["root"] = "a full private copy of the image extracted from its tar";
    cp_does["how"] = "cp -a TREE DIR, then bwrap --ro-bind DIR / ... cat FILES";
    cp_does["root"] = "a full private copy of the tree";

    std::vector<Variant> vs;
    Variant dsec{"dsec", dsec_does("dsec-run create --layers IMAGE, then dsec-run exec ID -- cat FILES"), {}, {}, {}};
    std::string layer_name = "dsec-bench-image";
    dsec.unavailable = t.run_missing("exec");
    if (dsec.unavailable.empty()) {
        if (auto b = bench::spawn_checked({t.layer, "build", big, "--name", layer_name}); !b)
            dsec.unavailable = b.error().describe();
    }
    if (dsec.unavailable.empty()) {
        std::string root = std::getenv("DSEC_ROOT") ? std::getenv("DSEC_ROOT") : ctx.paths.root;
        auto start = [t, layer_name, cat](size_t) -> Result<std::string> {
            auto rec = create_sandbox(t, layer_name);
            if (!rec) return fail(rec.error());
            std::string id = rec->value("id", "");
            std::vector<std::string> argv{t.run, "exec", id, "--"};
            argv.insert(argv.end(), cat.begin(), cat.end());
            if (auto r = bench::spawn_checked(argv); !r) {
                (void)destroy_sandboxes(t, {id});
                return fail(r.error());
            }
            return id;
        };
        auto cleanup = [t](const std::string& id) { return destroy_sandboxes(t, {id}); };
        auto disk = [root](const std::string& id) { return bench::disk_usage(root + "/sandboxes/" + id); };
        Variant v = io_variant("dsec", dsec.does, start, cleanup, disk);
        vs.push_back(std::move(v));
    } else {
        vs.push_back(std::move(dsec));
    }
    vs.push_back(io_variant("tar", tar_does, tar_start, rm, du));
    vs.push_back(io_variant("cp", cp_does, cp_start, rm, du));
    if (bench::find_tool("bwrap").empty())
        for (size_t i = 1; i < vs.size(); i++) vs[i].unavailable = "bwrap is not installed (Debian: bubblewrap)";

    auto rec = new_record("image", "start a sandbox and read " + std::to_string(reads.size()) + " files of a " +
                                       std::to_string(nfiles) + "-file image: on-demand EROFS layer (dsec) vs "
                                       "extracting the image's tar per sandbox vs cp -a of the tree per sandbox; "
                                       "page cache warm; bytes are rchar/wchar of the processes run (and their "
                                       "reaped children) and the disk each sandbox's private files use");
    if (auto r = interleave(vs, n, ctx.opt.warmup, "image"); !r) return r;
    rec["counts"] = {{"iterations", n}, {"warmup", ctx.opt.warmup}, {"image_files", nfiles + 0},
                     {"image_bytes", bench::disk_usage(big)}, {"tar_bytes", bench::disk_usage(tar)},
                     {"files_read", reads.size()}, {"file_bytes", size}};
    add_variants(rec, vs, "dsec");
    if (auto r = plot_cdfs(ctx, vs, "start + read files: latency CDF"); !r) return r;
    if (!ctx.opt.plot.empty()) rec["plot"] = ctx.opt.plot;
    return jsonl::emit(rec);
}

}  // namespace

void add_image(CLI::App& app, Context& ctx) {
    auto* image = app.add_subcommand(
        "image", "start a sandbox and read files of a large image: EROFS layer vs tar per sandbox vs cp -a");
    image->footer(cli::example("  dsec-bench image -n 10 --files 3 | jq .ratios"));
    add_options(image, ctx.opt, {"n", "warmup", "files", "scale", "plot", "use-state"});
    image->callback([&ctx] {
        ctx.action = [&ctx]() -> Result<int> {
            if (auto r = prepare(ctx); !r) return fail(r.error());
            if (auto r = run_image(ctx); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::bench_tool
