// dsec-guard events [ID...] [-f]: the egress denials the sandboxes' programs counted, as
// event records; with --follow, again every interval for the counts that grew.
#include <chrono>
#include <map>
#include <thread>

#include "dsec/json/jsonl.h"
#include "dsec/sandbox/network.h"
#include "dsec/sandbox/state.h"
#include "commands.h"

namespace dsec::guard_tool {

namespace {
using nlohmann::json;

struct EventsOptions {
    std::vector<std::string> ids;
    bool follow = false;
    double interval = 1;
};

// What one event is counted under: everything but the count.
std::string key_of(json e) {
    e.erase("count");
    e.erase("new");
    return e.dump();
}

Status look(const sandbox::Paths& paths, const EventsOptions& o, std::map<std::string, uint64_t>& seen) {
    std::vector<std::string> ids = o.ids.empty() ? sandbox::list_ids(paths) : o.ids;
    for (auto& id : ids) {
        if (!o.ids.empty() && !o.follow)
            if (auto st = sandbox::load(paths, id); !st) return fail(st.error());
        auto events = sandbox::egress_events(paths, id);
        if (!events) return fail(std::move(events.error()).context("sandbox " + id));
        for (auto& e : *events) {
            uint64_t count = e.value("count", uint64_t(0));
            uint64_t& before = seen[key_of(e)];
            if (count <= before) continue;
            e["new"] = count - before;
            e["time"] = sandbox::now_rfc3339();
            before = count;
            if (auto r = jsonl::emit(std::move(e)); !r) return r;
        }
    }
    return {};
}
}  // namespace

void add_events(CLI::App& app, Context& ctx) {
    auto o = std::make_shared<EventsOptions>();
    auto* cmd = app.add_subcommand("events", "print egress denials as event records (all sandboxes, or IDs)");
    cmd->footer(cli::example("  dsec-guard events -f | jq -c \'select(.op == \"connect\")\'"));
    cmd->add_option("ID", o->ids, "sandbox ids (default: every sandbox)");
    cmd->add_flag("-f,--follow", o->follow, "keep printing denials as they are counted, until interrupted");
    cmd->add_option("--interval", o->interval, "seconds between looks with --follow (default 1)")
        ->check(CLI::Range(0.05, 3600.0));
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            sandbox::Paths paths(ctx.paths);
            std::map<std::string, uint64_t> seen;
            if (auto r = look(paths, *o, seen); !r) return fail(r.error());
            while (o->follow && !interrupted()) {
                std::this_thread::sleep_for(std::chrono::duration<double>(o->interval));
                if (auto r = look(paths, *o, seen); !r) return fail(r.error());
            }
            return o->follow ? cli::kExitInterrupted : cli::kExitOk;
        };
    });
}

}  // namespace dsec::guard_tool
