// dsec-reclaim status: one record per sandbox (state, idle time, memory), then the host's.
#include "dsec/reclaim/memory.h"
#include "dsec/reclaim/status.h"
#include "dsec/sandbox/state.h"
#include "commands.h"

namespace dsec::reclaim_tool {

void add_status(CLI::App& app, Context& ctx) {
    auto* cmd = app.add_subcommand("status", "per sandbox: state, idle time, resident, swapped and page-cache "
                                             "memory; then host totals and memory pressure (PSI)");
    cmd->footer(cli::example("  dsec-reclaim status | jq -c \'select(.type == \"host\")\'"));
    cmd->callback([&ctx] {
        ctx.action = [&ctx]() -> Result<int> {
            // Sandboxes first, each as the kernel sees it now; the host record last.
            for (auto& id : sandbox::list_ids(sandbox::Paths(ctx.paths))) {
                auto status = reclaim::sandbox_status(ctx.paths, id);
                if (!status) continue;  // destroyed meanwhile
                if (auto r = jsonl::emit(*status); !r) return fail(r.error());
            }
            if (auto r = jsonl::emit(reclaim::host_record()); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::reclaim_tool
