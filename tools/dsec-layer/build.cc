// dsec-layer build DIR: a directory tree becomes a layer.
#include "dsec/json/jsonl.h"
#include "dsec/layer/build.h"
#include "commands.h"

namespace dsec::layer_tool {

Result<std::map<std::string, std::string>> parse_labels(const std::vector<std::string>& labels) {
    std::map<std::string, std::string> out;
    for (auto& l : labels) {
        auto eq = l.find('=');
        if (eq == std::string::npos || eq == 0)
            return fail(make_error("usage", "label \"" + l + "\" is not of the form key=value"));
        out[l.substr(0, eq)] = l.substr(eq + 1);
    }
    return out;
}

void add_build(CLI::App& app, Context& ctx) {
    struct Opts {
        std::string dir, name, compression = "lz4";
        std::vector<std::string> labels;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("build", "build a layer from a directory tree");
    cmd->add_option("DIR", opts->dir, "directory to build from")->required()->check(CLI::ExistingDirectory);
    cmd->add_option("--name", opts->name, "name the layer")->required();
    cmd->add_option("--label", opts->labels, "add a label key=value (repeatable)");
    cmd->add_option("--compress", opts->compression, "none, lz4 or lz4hc")->capture_default_str();
    cmd->callback([&ctx, opts] {
        ctx.action = [&ctx, opts]() -> Result<int> {
            auto labels = parse_labels(opts->labels);
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
