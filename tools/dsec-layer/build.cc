// dsec-layer build DIR: a directory tree becomes a layer.
#include "dsec/json/jsonl.h"
#include "dsec/layer/build.h"
#include "dsec/sys/parse.h"
#include "commands.h"

namespace dsec::layer_tool {

void add_build(CLI::App& app, Context& ctx) {
    struct Opts {
        std::string dir, name, compression = "lz4";
        std::vector<std::string> labels;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("build", "build a layer from a directory tree");
    cmd->footer(cli::example("  dsec-layer build ./rootfs --name base --label os=busybox\n  dsec-layer build ./work --name task-4711 --compress lz4hc"));
    cmd->add_option("DIR", opts->dir, "directory to build from")->required()->check(CLI::ExistingDirectory);
    cmd->add_option("--name", opts->name, "name the layer")->required();
    cmd->add_option("--label", opts->labels, "add a label key=value (repeatable)");
    cmd->add_option("--compress", opts->compression, "none, lz4 or lz4hc")->capture_default_str();
    cmd->callback([&ctx, opts] {
        ctx.action = [&ctx, opts]() -> Result<int> {
            auto labels = parse::parse_labels(opts->labels);
            if (!labels) return fail(labels.error());
            layer::BuildOptions b;
            b.name = opts->name;
            b.labels = *labels;
            b.compression = opts->compression;
            b.source = "dir:" + opts->dir;
            auto store = ctx.store();
            auto built = layer::build_tree(store, opts->dir, b);
            if (!built) return fail(std::move(built.error()).context("building layer \"" + opts->name + "\""));
            if (auto r = jsonl::emit(built->to_record(store.image_path(built->digest))); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::layer_tool
