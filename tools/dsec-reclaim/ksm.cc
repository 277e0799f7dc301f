// dsec-reclaim ksm on|off|status: ksmd started or stopped, and what merging saves.
#include "dsec/reclaim/ksm.h"
#include "commands.h"

namespace dsec::reclaim_tool {

void add_ksm(CLI::App& app, Context& ctx) {
    auto what = std::make_shared<std::string>("status");
    auto* cmd = app.add_subcommand("ksm", "merge identical pages of sandboxes (on), stop merging (off), or show "
                                          "pages shared and memory saved (status)");
    cmd->footer(cli::example("  dsec-reclaim ksm on; dsec-reclaim ksm status | jq .saved"));
    cmd->add_option("ACTION", *what, "on, off or status")->check(CLI::IsMember({"on", "off", "status"}))
        ->capture_default_str();
    cmd->callback([&ctx, what] {
        ctx.action = [what]() -> Result<int> {
            if (*what != "status")
                if (auto r = reclaim::ksm_run(*what == "on"); !r) return fail(r.error());
            if (auto r = jsonl::emit(reclaim::ksm_status()); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::reclaim_tool
