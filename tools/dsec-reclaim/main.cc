// dsec-reclaim: lifetimes enforced, idle sandboxes paused and their memory pushed out,
// shared pages merged, and what crashed runs left removed. Made for cron and timers.
#include "commands.h"

using namespace dsec;

int main(int argc, char** argv) {
    CLI::App app("dsec-reclaim: destroy expired sandboxes, pause idle ones, reclaim memory, remove leftovers",
                 "dsec-reclaim");
    app.footer(cli::example(
        "  dsec-reclaim gc --dry-run | jq -r '[.kind, .path] | @tsv'\n"
        "  dsec-reclaim ttl && dsec-reclaim idle --after 10m && dsec-reclaim gc\n"
        "  dsec-reclaim status | jq 'select(.type == \"sandbox\") | {id, state, idle_s, resident}'\n"
        "  dsec-reclaim swap --zram 4G; dsec-reclaim ksm on; dsec-reclaim resume ID"));
    cli::add_version(app);
    app.require_subcommand(1, 1);

    reclaim_tool::Context ctx;
    cli::add_path_options(app, ctx.paths);
    // Each pass reports one event record per action; a failed item does not stop it.
    reclaim_tool::add_gc(app, ctx);
    reclaim_tool::add_ttl(app, ctx);
    reclaim_tool::add_status(app, ctx);
    reclaim_tool::add_idle(app, ctx);
    reclaim_tool::add_swap(app, ctx);
    reclaim_tool::add_ksm(app, ctx);

    return cli::main(app, argc, argv, [&] { return ctx.action(); });
}
