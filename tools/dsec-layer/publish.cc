// dsec-layer publish: copy layers from this node's store into a shared one.
#include "dsec/json/jsonl.h"
#include "dsec/layer/publish.h"
#include "commands.h"

namespace dsec::layer_tool {

void add_publish(CLI::App& app, Context& ctx) {
    struct Opts {
        std::vector<std::string> refs;
        std::string to, name;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("publish", "copy layers into another store (a shared one), atomically for its readers");
    cmd->footer(cli::example("  dsec-layer publish task-env --to /mnt/shared/layers"));
    cmd->add_option("REF", opts->refs, "layer name or digest prefix in this node's store")->required();
    cmd->add_option("--to", opts->to, "the store to publish into (a directory on the shared filesystem)")->required();
    cmd->add_option("--name", opts->name, "the name to give it there (default: REF when it is a name, else the build's name)");
    cmd->callback([&ctx, opts] {
        ctx.action = [&ctx, opts]() -> Result<int> {
            if (!opts->name.empty() && opts->refs.size() != 1)
                return fail(make_error(Code::usage, "--name goes with exactly one REF"));
            auto from = ctx.store();
            layer::Store to(opts->to);
            auto names = from.names();
            if (!names) return fail(names.error());
            for (auto& ref : opts->refs) {
                auto l = from.resolve(ref);
                if (!l) return fail(l.error());
                std::string name = !opts->name.empty() ? opts->name : names->count(ref) ? ref : l->name;
                auto done = layer::publish_to(from, *l, to, name);
                if (!done) return fail(std::move(done.error()).context("publishing \"" + ref + "\""));
                auto rec = done->layer.to_record(to.image_path(done->layer.digest));
                rec["copied"] = done->copied;
                if (auto r = jsonl::emit(rec); !r) return fail(r.error());
            }
            return 0;
        };
    });
}

}  // namespace dsec::layer_tool
