// dsec-mount ls and release: the layers mounted on this host and who uses them.
#include "dsec/json/jsonl.h"
#include "dsec/mount/layers.h"
#include "dsec/sandbox/state.h"
#include "commands.h"

namespace dsec::mount_tool {

namespace {

// A mounted layer with what the store and the sandboxes' state say about it.
nlohmann::json mount_record(const layer::Store& store, const mount::MountedLayer& m, size_t users) {
    auto l = store.resolve(m.digest);
    return {{"type", "mount"}, {"v", 1},          {"digest", m.digest}, {"name", l ? l->name : ""},
            {"path", m.path},  {"image", m.image}, {"users", users}};
}

size_t users_of(const std::map<std::string, size_t>& users, const std::string& digest) {
    auto it = users.find(digest);
    return it == users.end() ? 0 : it->second;
}

// Which mounted layer a release argument means: a digest, a unique hex prefix, or a name.
Result<mount::MountedLayer> pick(const layer::Store& store, const std::vector<mount::MountedLayer>& mounted,
                                 const std::string& ref) {
    std::string hex = ref.rfind("sha256:", 0) == 0 ? ref.substr(7) : ref;
    std::vector<const mount::MountedLayer*> hits;
    for (auto& m : mounted)
        if (hex.size() >= 4 && m.digest.compare(7, hex.size(), hex) == 0) hits.push_back(&m);
    if (hits.empty())
        if (auto l = store.resolve(ref); l)
            for (auto& m : mounted)
                if (m.digest == l->digest) hits.push_back(&m);
    if (hits.size() > 1) return fail(make_error(Code::ambiguous, "\"" + ref + "\" matches more than one mounted layer"));
    if (hits.empty()) return fail(make_error(Code::not_found, "no mounted layer \"" + ref + "\""));
    return *hits.front();
}

}  // namespace

void add_query(CLI::App& app, Context& ctx) {
    auto* ls = app.add_subcommand("ls", "list the layers mounted on this host, with how many live sandboxes use each");
    ls->footer(cli::example("  dsec-mount ls | jq -c \'select(.users == 0)\'"));
    ls->callback([&ctx] {
        ctx.action = [&ctx]() -> Result<int> {
            auto mounted = mount::mounted_layers(ctx.paths);
            if (!mounted) return fail(mounted.error());
            auto users = sandbox::layer_users(sandbox::Paths(ctx.paths));
            if (!users) return fail(users.error());
            for (auto& m : *mounted)
                if (auto r = jsonl::emit(mount_record(ctx.store(), m, users_of(*users, m.digest))); !r)
                    return fail(r.error());
            return 0;
        };
    });

    auto refs = std::make_shared<std::vector<std::string>>();
    auto* release = app.add_subcommand("release", "unmount layers no live sandbox uses (all unused ones by default)");
    release->footer(cli::example("  dsec-mount release                 # every layer mount no live sandbox uses"));
    release->add_option("DIGEST", *refs, "layer digest (prefix) or name; refused while a sandbox uses it");
    release->callback([&ctx, refs] {
        ctx.action = [&ctx, refs]() -> Result<int> {
            auto mounted = mount::mounted_layers(ctx.paths);
            if (!mounted) return fail(mounted.error());
            auto users = sandbox::layer_users(sandbox::Paths(ctx.paths));
            if (!users) return fail(users.error());
            auto store = ctx.store();
            std::vector<mount::MountedLayer> targets;
            int status = 0;
            if (refs->empty()) {
                for (auto& m : *mounted)
                    if (users_of(*users, m.digest) == 0) targets.push_back(m);
            }
            for (auto& ref : *refs) {
                auto m = pick(store, *mounted, ref);
                if (!m) {
                    cli::report(m.error());
                    status = cli::kExitFailed;
                } else if (size_t n = users_of(*users, m->digest); n > 0) {
                    cli::report(make_error(Code::busy,
                                           "layer " + m->digest + " is used by " + std::to_string(n) +
                                               " live sandbox(es): destroy them first",
                                           m->path));
                    status = cli::kExitFailed;
                } else {
                    targets.push_back(*m);
                }
            }
            for (auto& m : targets) {
                if (cli::interrupted()) return fail(cli::interrupted_error());
                auto rec = mount_record(store, m, 0);
                if (auto r = mount::unmount_layer(ctx.paths, m.digest); !r) {
                    cli::report(r.error());
                    status = cli::kExitFailed;
                    continue;
                }
                rec["released"] = true;
                if (auto r = jsonl::emit(rec); !r) return fail(r.error());
            }
            return status;
        };
    });
}

}  // namespace dsec::mount_tool
