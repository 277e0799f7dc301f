// dsec-layer export: a layer's tree as a zstd-compressed tar stream.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsec/json/jsonl.h"
#include "dsec/layer/export.h"
#include "commands.h"

namespace dsec::layer_tool {

void add_export(CLI::App& app, Context& ctx) {
    struct Opts {
        std::string ref, output;
        int level = 3;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("export", "write a layer's tree as a zstd-compressed tar stream");
    cmd->footer(cli::example("  dsec-layer export task-env -o task-env.tar.zst\n  dsec-layer export base | ssh node2 dsec-layer import - --name base   # same digest there"));
    cmd->add_option("REF", opts->ref, "layer name or digest prefix")->required();
    cmd->add_option("-o,--output", opts->output, "write to FILE (atomically) instead of standard output");
    cmd->add_option("--level", opts->level, "zstd compression level, 1 to 22")->capture_default_str();
    cmd->callback([&ctx, opts] {
        ctx.action = [&ctx, opts]() -> Result<int> {
            auto store = ctx.store();
            auto l = store.resolve(opts->ref);
            if (!l) return fail(l.error());
            if (opts->output.empty()) {
                if (::isatty(STDOUT_FILENO))
                    return fail(make_error(Code::usage, "refusing to write a tar stream to a terminal (use -o FILE)"));
                cli::stdout_carries_data();
                auto r = layer::export_image(store.image_path(l->digest), STDOUT_FILENO, opts->level);
                if (!r) return fail(std::move(r.error()).context("exporting " + opts->ref));
                return 0;
            }
            // A temp file beside the target, renamed into place once complete.
            std::string tmp = opts->output + ".tmp." + std::to_string(::getpid());
            Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
            if (!fd) return fail(sys_error("create", tmp));
            auto r = layer::export_image(store.image_path(l->digest), fd.get(), opts->level);
            if (r && ::fsync(fd.get()) < 0) r = fail(sys_error("fsync", tmp));
            if (r && ::rename(tmp.c_str(), opts->output.c_str()) < 0) r = fail(sys_error("rename", opts->output));
            if (!r) {
                ::unlink(tmp.c_str());
                return fail(std::move(r.error()).context("exporting " + opts->ref));
            }
            struct stat st;
            uint64_t bytes = ::fstat(fd.get(), &st) == 0 ? uint64_t(st.st_size) : 0;
            nlohmann::json rec = {{"type", "export"}, {"digest", l->digest}, {"name", l->name},
                                  {"path", opts->output}, {"bytes", bytes}, {"level", opts->level}};
            if (auto e = jsonl::emit(rec); !e) return fail(e.error());
            return 0;
        };
    });
}

}  // namespace dsec::layer_tool
