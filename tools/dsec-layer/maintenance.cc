// dsec-layer tag, rm, verify, gc: keeping the store named, checked and clean.
#include <iostream>
#include <set>

#include "dsec/json/jsonl.h"
#include "dsec/layer/gc.h"
#include "dsec/layer/verify.h"
#include "dsec/sandbox/state.h"
#include "commands.h"

namespace dsec::layer_tool {

using nlohmann::json;

static void add_tag(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<std::pair<std::string, std::string>>();
    auto* cmd = app.add_subcommand("tag", "give a layer another name (or move a name to it)");
    cmd->footer(cli::example("  dsec-layer tag python3.12 python   # python now names the same layer"));
    cmd->add_option("REF", args->first, "layer name or digest prefix")->required();
    cmd->add_option("NAME", args->second, "new name")->required();
    cmd->callback([&ctx, args] {
        ctx.action = [&ctx, args]() -> Result<int> {
            auto store = ctx.store();
            auto l = store.resolve(args->first);
            if (!l) return fail(l.error());
            if (auto r = store.tag(args->second, l->digest); !r) return fail(r.error());
            if (auto r = jsonl::emit(l->to_record(store.image_path(l->digest))); !r) return fail(r.error());
            return 0;
        };
    });
}

static void add_rm(CLI::App& app, Context& ctx) {
    struct Opts {
        std::vector<std::string> refs;
        bool name_only = false;
        bool all_names = false;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand(
        "rm", "remove a name (the layer goes with its last name), or a layer by digest; refused while a live sandbox uses it");
    cmd->footer(cli::example("  dsec-layer rm python          # only the name; the layer goes with its last one\n  dsec-layer rm --all-names python3.12"));
    cmd->add_option("REF", opts->refs, "layer name or digest prefix")->required();
    auto* only = cmd->add_flag("--name-only", opts->name_only,
                               "remove only the name, even the last one (gc removes the layer later if unnamed)");
    cmd->add_flag("--all-names", opts->all_names, "remove the layer with every name it has")->excludes(only);
    cmd->callback([&ctx, opts] {
        ctx.action = [&ctx, opts]() -> Result<int> {
            auto store = ctx.store();
            auto users = sandbox::layer_users(sandbox::Paths(ctx.paths));
            if (!users) return fail(users.error());
            auto names = store.names();
            if (!names) return fail(names.error());
            for (auto& ref : opts->refs) {
                auto l = store.resolve(ref);
                if (!l) return fail(l.error());
                auto used = users->find(l->digest);
                int in_use = used == users->end() ? 0 : int(used->second);
                json rec = {{"type", "removed"}, {"digest", l->digest}, {"ref", ref}, {"name_only", opts->name_only}};
                if (opts->name_only) {
                    if (auto r = store.untag(ref); !r) return fail(r.error());
                    rec["layer_removed"] = false;
                } else if (names->count(ref) && !opts->all_names) {
                    auto r = store.rm_name(ref, in_use);
                    if (!r) return fail(r.error());
                    rec["layer_removed"] = r->layer_removed;
                    rec["names_left"] = r->names_left;
                } else {
                    if (in_use)
                        return fail(make_error(Code::busy, "layer " + ref + " is used by " + std::to_string(in_use) +
                                                           " live sandbox(es); destroy them first"));
                    if (auto r = store.remove(*l); !r) return fail(r.error());
                    rec["layer_removed"] = true;
                }
                if (auto r = jsonl::emit(rec); !r) return fail(r.error());
                names = store.names();
                if (!names) return fail(names.error());
            }
            return 0;
        };
    });
}

static void add_verify(CLI::App& app, Context& ctx) {
    auto refs = std::make_shared<std::vector<std::string>>();
    auto* cmd = app.add_subcommand("verify", "recompute digests and check that images read; one verify record each");
    cmd->footer(cli::example("  dsec-layer verify | jq -c \'select(.ok | not)\'"));
    cmd->add_option("REF", *refs, "layer name or digest prefix; none checks every layer");
    cmd->callback([&ctx, refs] {
        ctx.action = [&ctx, refs]() -> Result<int> {
            auto store = ctx.store();
            std::vector<layer::Layer> layers;
            if (refs->empty()) {
                auto all = store.all();
                if (!all) return fail(all.error());
                layers = *all;
            }
            for (auto& ref : *refs) {
                auto l = store.resolve(ref);
                if (!l) return fail(l.error());
                layers.push_back(*l);
            }
            cli::Progress bar("verifying", layers.size());
            int bad = 0;
            for (auto& l : layers) {
                if (cli::interrupted()) return fail(cli::interrupted_error());
                auto outcome = layer::verify(store, l);
                json rec = {{"type", "verify"}, {"digest", l.digest}, {"name", l.name}, {"ok", bool(outcome)}};
                if (!outcome) {
                    rec["error"] = outcome.error().describe();
                    std::cerr << "dsec-layer: " << l.digest << ": " << outcome.error().describe() << "\n";
                    bad++;
                }
                if (auto r = jsonl::emit(rec); !r) return fail(r.error());
                bar.add(1);
            }
            return bad ? 1 : 0;
        };
    });
}

static void add_gc(CLI::App& app, Context& ctx) {
    auto dry_run = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand("gc", "remove unnamed layers, dangling names and leftovers of interrupted builds");
    cmd->footer(cli::example("  dsec-layer gc --dry-run; dsec-layer gc"));
    cmd->add_flag("-n,--dry-run", *dry_run, "only report what would be removed");
    cmd->callback([&ctx, dry_run] {
        ctx.action = [&ctx, dry_run]() -> Result<int> {
            auto users = sandbox::layer_users(sandbox::Paths(ctx.paths));
            if (!users) return fail(users.error());
            std::set<std::string> in_use;
            for (auto& [d, n] : *users) in_use.insert(d);
            auto removed = layer::collect_garbage(ctx.store(), in_use, *dry_run);
            if (!removed) return fail(removed.error());
            for (auto& item : *removed)
                if (auto r = jsonl::emit(item); !r) return fail(r.error());
            return 0;
        };
    });
}

void add_maintenance(CLI::App& app, Context& ctx) {
    add_tag(app, ctx);
    add_rm(app, ctx);
    add_verify(app, ctx);
    add_gc(app, ctx);
}

}  // namespace dsec::layer_tool
