// dsec-run snapshot, fork and reset: a sandbox's files as a layer, new sandboxes from
// them, and a sandbox back to its layers.
#include "dsec/layer/store.h"
#include "dsec/sandbox/limits.h"
#include "dsec/snapshot/reset.h"
#include "dsec/snapshot/fork.h"
#include "dsec/snapshot/snapshot.h"
#include "commands.h"

namespace dsec::run_tool {

namespace {
void add_snapshot_options(CLI::App* cmd, snapshot::SnapshotOptions& o) {
    cmd->add_option("--policy", o.policy, "policy file whose \"scrub\" paths are left out of the layer");
    cmd->add_option("--compress", o.compression, "image compression: none, lz4 or lz4hc")
        ->check(CLI::IsMember({"none", "lz4", "lz4hc"}))
        ->capture_default_str();
    cmd->add_flag("--keep-special", o.keep_special, "keep set-id bits, device nodes and file capabilities");
}
}  // namespace

void add_snapshot(CLI::App& app, Context& ctx) {
    struct Opts {
        std::string id;
        snapshot::SnapshotOptions snap;
    };
    auto o = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("snapshot", "pack a running sandbox's files into a new layer (a layer record out)");
    cmd->footer(cli::example("  dsec-run snapshot box1 --name task-env --policy eval.json\n"
                             "  dsec-run snapshot box1 | jq -r '.parents[], .digest' | xargs dsec-layer ls | dsec-mount | dsec-run create"));
    cmd->add_option("ID", o->id, "the sandbox")->required();
    cmd->add_option("--name", o->snap.name, "name of the new layer");
    add_snapshot_options(cmd, o->snap);
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            layer::Store store(ctx.paths.layers());
            // Freeze, copy the upper, thaw; then make and publish the image.
            auto snap = snapshot::take(ctx.sandbox_paths(), store, o->id, o->snap);
            if (!snap) return fail(std::move(snap.error()).about(o->id));
            if (auto r = jsonl::emit(snap->record(store, o->id)); !r) return fail(r.error());
            return cli::kExitOk;
        };
    });
}

void add_fork(CLI::App& app, Context& ctx) {
    struct Opts {
        std::string id;
        size_t count = 1, parallel = 1;
        snapshot::SnapshotOptions snap;
    };
    auto o = std::make_shared<Opts>();
    // A fork's layer is used at once on this node: packed fast rather than small.
    o->snap.compression = "none";
    auto* cmd = app.add_subcommand("fork", "new sandboxes from a running one's current files (sandbox records out)");
    cmd->footer(cli::example("  dsec-run fork box1 --count 8 -P 4 | dsec-run exec -P 8 --json -- ./try.sh"));
    cmd->add_option("ID", o->id, "the sandbox to fork")->required();
    cmd->add_option("-n,--count", o->count, "how many sandboxes to make")->check(CLI::Range(1, 100000));
    cmd->add_option("-P,--parallel", o->parallel, "create up to N sandboxes at once")->check(CLI::Range(1, 256));
    add_snapshot_options(cmd, o->snap);
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            auto paths = ctx.sandbox_paths();
            layer::Store store(ctx.paths.layers());
            // The source's create options, read before its files are taken.
            auto state = sandbox::load(paths, o->id);
            if (!state) return fail(std::move(state.error()).about(o->id));
            auto options = snapshot::options_like(state->to_record());
            if (!options) return fail(options.error());
            // Its current files as a layer on top of its own layers.
            auto snap = snapshot::take(paths, store, o->id, o->snap);
            if (!snap) return fail(std::move(snap.error()).about(o->id));
            std::vector<std::string> layers = snap->layer.parents;
            layers.push_back(snap->layer.digest);
            // One create per fork over those layers.
            size_t failed = for_each_parallel(o->count, o->parallel, [&](size_t) -> Status {
                std::string id = random_hex(kSandboxIdBytes);
                auto rootfs = rootfs_from_layers(ctx, layers, id, false);
                if (!rootfs) return fail(rootfs.error());
                auto rec = sandbox::create(paths, *rootfs, *options);
                if (!rec) return fail(std::move(rec.error()).about(id));
                (*rec)["forked_from"] = o->id;
                (*rec)["snapshot"] = snap->layer.digest;
                return jsonl::emit(*rec);
            });
            return failed ? cli::kExitFailed : cli::kExitOk;
        };
    });
}

void add_reset(CLI::App& app, Context& ctx) {
    struct Opts {
        std::vector<std::string> ids;
        size_t parallel = 1;
        bool standby = false;
    };
    auto o = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("reset", "put sandboxes back to their layers: processes restarted, files as created");
    cmd->footer(cli::example("  dsec-run reset box1\n"
                             "  dsec-run reset --standby box1   # the next reset of box1 only swaps to a ready init\n"
                             "  dsec-run ls -q --label episode=done | xargs dsec-run reset -P 4"));
    cmd->add_option("ID", o->ids, "sandbox ids; none: sandbox records on stdin");
    cmd->add_option("-P,--parallel", o->parallel, "reset up to N sandboxes at once")->check(CLI::Range(1, 256));
    cmd->add_flag("--standby", o->standby,
                  "after the reset, keep a stopped init ready for the next one (made after the record is out)");
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            auto ids = ids_or_records(o->ids);
            if (!ids) return fail(ids.error());
            std::vector<snapshot::Reset> done(ids->size());
            // Restart each at once and say so; the old inits die meanwhile.
            size_t failed = for_each_parallel(ids->size(), o->parallel, [&](size_t i) -> Status {
                auto r = snapshot::reset(ctx.paths, (*ids)[i]);
                if (!r) return fail(std::move(r.error()).about((*ids)[i]));
                done[i] = std::move(*r);
                return jsonl::emit(done[i].record);
            });
            // The next resets' inits, while the old ones die.
            if (o->standby)
                failed += for_each_parallel(ids->size(), o->parallel, [&](size_t i) -> Status {
                    if (done[i].record.is_null()) return {};
                    auto r = snapshot::keep_standby(ctx.paths, (*ids)[i]);
                    if (!r) return fail(std::move(r.error()).about((*ids)[i]));
                    return {};
                });
            // Then the old uppers go, once their inits are gone.
            for (auto& d : done)
                if (auto r = snapshot::finish(d); !r) {
                    cli::report(r.error());
                    failed++;
                }
            return failed ? cli::kExitFailed : cli::kExitOk;
        };
    });
}

}  // namespace dsec::run_tool
