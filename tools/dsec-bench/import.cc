// dsec-bench import: dsec-layer import of a large tar against tar -xf + mkfs.erofs by
// hand with the same compression, interleaved.
#include "dsec/json/jsonl.h"
#include "dsec/sys/fs.h"
#include "commands.h"

namespace dsec::bench_tool {

Result<std::vector<std::string>> make_data_tree(const std::string& dir, size_t files, size_t size);

namespace {

Status run_import(Context& ctx) {
    // 200 MiB by default: 800 files of 256 KiB.
    size_t files = ctx.scaled(800, 4), size = 256 * 1024;
    size_t n = ctx.iterations(3);
    std::string src = ctx.ws->dir() + "/import-tree", tar = ctx.ws->dir() + "/import.tar";
    if (auto r = make_data_tree(src, files, size); !r) return fail(r.error());
    if (auto r = bench::spawn_checked({"tar", "-cf", tar, "-C", src, "."}); !r) return fail(r.error());
    (void)fs::remove_tree(src);
    auto t = DsecTools::find();
    std::string work = ctx.ws->dir() + "/import-runs";
    (void)fs::mkdir_p(work);

    Variant dsec{"dsec", {{"how", "dsec-layer import IMAGE.tar --name NAME"},
                          {"does", "extract (checked: no links out, no devices), mkfs.erofs -zlz4, sha256, publish"}},
                 {}, {}, {}};
    if (t.layer.empty()) dsec.unavailable = "dsec-layer is not built";
    else if (auto h = bench::spawn({t.layer, "import", "--help"}); !h || h->status != 0)
        dsec.unavailable = "dsec-layer has no 'import' subcommand in this build";
    dsec.once = [t, tar](size_t i) -> Result<double> {
        std::string name = "dsec-bench-import-" + std::to_string(i);
        auto ran = bench::spawn_checked({t.layer, "import", tar, "--name", name});
        if (!ran) return fail(ran.error());
        (void)bench::spawn({t.layer, "rm", name});
        return ran->ms;
    };
    Variant by_hand{"tar+mkfs.erofs", {{"how", "tar -xf IMAGE.tar -C DIR && mkfs.erofs -zlz4 IMG DIR"},
                                       {"does", "extract, mkfs.erofs with the same compression (lz4); no digest, no store"}},
                    {}, {}, {}};
    by_hand.once = [tar, work](size_t i) -> Result<double> {
        std::string d = work + "/x" + std::to_string(i), img = work + "/x" + std::to_string(i) + ".erofs";
        if (auto r = fs::mkdir_p(d); !r) return fail(r.error());
        double t0 = bench::now_ms();
        if (auto r = bench::spawn_checked({"tar", "-xf", tar, "-C", d}); !r) return fail(r.error());
        if (auto r = bench::spawn_checked({"mkfs.erofs", "--quiet", "-zlz4", img, d}); !r) return fail(r.error());
        double ms = bench::now_ms() - t0;
        (void)fs::remove_tree(d);
        ::unlink(img.c_str());
        return ms;
    };
    std::vector<Variant> vs{std::move(dsec), std::move(by_hand)};
    auto rec = new_record("import", "a " + std::to_string(files * size >> 20) + " MiB tar (" + std::to_string(files) +
                                        " files) made into an EROFS layer: dsec-layer import against tar -xf + "
                                        "mkfs.erofs by hand with the same compression, alternately");
    size_t warmup = std::min<size_t>(ctx.opt.warmup, 1);
    if (auto r = interleave(vs, n, warmup, "import"); !r) return r;
    rec["counts"] = {{"iterations", n}, {"warmup", warmup}, {"tar_bytes", bench::disk_usage(tar)}, {"files", files}};
    add_variants(rec, vs, "dsec");
    if (auto r = plot_cdfs(ctx, vs, "import a tar into an EROFS image"); !r) return r;
    if (!ctx.opt.plot.empty()) rec["plot"] = ctx.opt.plot;
    return jsonl::emit(rec);
}

}  // namespace

void add_import(CLI::App& app, Context& ctx) {
    auto* import = app.add_subcommand(
        "import", "dsec-layer import of a >= 200 MB tar vs tar -xf + mkfs.erofs by hand (same compression)");
    import->footer(cli::example("  dsec-bench import -n 3 | jq .ratios"));
    add_options(import, ctx.opt, {"n", "warmup", "scale", "plot", "use-state"});
    import->callback([&ctx] {
        ctx.action = [&ctx]() -> Result<int> {
            if (auto r = prepare(ctx); !r) return fail(r.error());
            if (auto r = run_import(ctx); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::bench_tool
