// dsec-run cp: files into and out of a sandbox as tar streams.
#include "dsec/sandbox/cp.h"
#include "commands.h"

namespace dsec::run_tool {

namespace {
// "ID:/path" -> {id, path}; a host path gives an empty id.
std::pair<std::string, std::string> split_ref(const std::string& ref) {
    auto colon = ref.find(':');
    if (colon == std::string::npos || colon == 0 || ref.find('/') < colon) return {"", ref};
    return {ref.substr(0, colon), ref.substr(colon + 1)};
}
}  // namespace

void add_cp(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<std::pair<std::string, std::string>>();
    auto* cmd = app.add_subcommand("cp", "copy files or directories into (DST is ID:/path) or out of (SRC is ID:/path) a sandbox");
    cmd->add_option("SRC", args->first, "host path or ID:/path")->required();
    cmd->add_option("DST", args->second, "host path or ID:/path")->required();
    cmd->callback([&ctx, args] {
        ctx.action = [&ctx, args]() -> Result<int> {
            auto [src_id, src] = split_ref(args->first);
            auto [dst_id, dst] = split_ref(args->second);
            if (src_id.empty() == dst_id.empty())
                return fail(make_error("usage", "exactly one of SRC and DST must be ID:/path"));
            std::string id = src_id.empty() ? dst_id : src_id;
            if ((src_id.empty() ? dst : src).rfind('/', 0) != 0)
                return fail(make_error("usage", "the path inside the sandbox must be absolute (ID:/path)"));
            auto paths = ctx.sandbox_paths();
            auto stats = src_id.empty() ? sandbox::copy_in(paths, id, src, dst) : sandbox::copy_out(paths, id, src, dst);
            if (!stats) return fail(stats.error());
            json rec = {{"type", "copy"}, {"id", id}, {"src", args->first}, {"dst", args->second},
                        {"entries", stats->entries}, {"bytes", stats->bytes}};
            if (auto r = jsonl::emit(rec); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::run_tool
