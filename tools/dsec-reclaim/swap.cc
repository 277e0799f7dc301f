// dsec-reclaim swap: compressed swap in memory (zram) on or off (lib/dsec/reclaim/swap.h).
#include "dsec/reclaim/swap.h"
#include "dsec/sandbox/limits.h"
#include "commands.h"

namespace dsec::reclaim_tool {

void add_swap(CLI::App& app, Context& ctx) {
    struct Opts {
        std::string zram;
        bool off = false;
    };
    auto o = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("swap", "set up compressed swap in memory (zram) for pushed-out pages, or remove "
                                           "it; without options, show it");
    cmd->footer(cli::example("  dsec-reclaim swap --zram 8G; dsec-reclaim swap --off"));
    auto* zram = cmd->add_option("--zram", o->zram, "make /dev/zram0 a swap device of this size, e.g. 4G")
                     ->type_name("SIZE");
    cmd->add_flag("--off", o->off, "swapoff and reset /dev/zram0")->excludes(zram);
    cmd->callback([&ctx, o] {
        ctx.action = [o]() -> Result<int> {
            if (o->off) {
                // Pages in it come back into RAM first: this fails if they do not fit.
                if (auto r = reclaim::zram_off(); !r) return fail(r.error());
            } else if (!o->zram.empty()) {
                auto size = sandbox::parse_size(o->zram);
                if (!size) return fail(make_error(Code::usage, "--zram: " + size.error().detail()));
                if (auto r = reclaim::zram_on(*size); !r) return fail(r.error());
            }
            if (auto r = jsonl::emit(reclaim::zram_status()); !r) return fail(r.error());
            return 0;
        };
    });
}

}  // namespace dsec::reclaim_tool
