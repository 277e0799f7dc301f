// dsec-mount [LAYER...]: layer records (or names) in, rootfs records out; with --at, one
// rootfs assembled as an overlay at a directory for a person to look into.
#include "dsec/json/jsonl.h"
#include "dsec/mount/overlay.h"
#include "dsec/mount/stack.h"
#include "dsec/sys/fs.h"
#include "commands.h"

namespace dsec::mount_tool {

namespace {

struct Opts {
    std::vector<std::string> refs;
    size_t count = 1;
    std::string id;
    bool verify = false;
    std::string at;
    bool read_only = false;
};

// What arrived: a stack of layers (base first) and any rootfs records.
struct Input {
    std::vector<layer::Layer> layers;
    std::vector<mount::Rootfs> rootfs;
};

// Layers from the arguments, or layer/rootfs records from stdin. Each layer is looked
// up in the store by digest: the store's metadata, not the record, is trusted.
Result<Input> read_input(const layer::Store& store, const std::vector<std::string>& refs) {
    Input in;
    for (auto& ref : refs) {
        auto l = store.resolve(ref);
        if (!l) return fail(l.error());
        in.layers.push_back(std::move(*l));
    }
    if (!refs.empty()) return in;
    jsonl::Reader reader;
    while (true) {
        auto rec = reader.next();
        if (!rec) return fail(rec.error());
        if (!*rec) break;
        auto& j = **rec;
        std::string type = jsonl::type_of(j);
        if (type == "layer") {
            auto digest = jsonl::get_string(j, "digest");
            if (!digest) return fail(digest.error());
            auto l = store.resolve(*digest);
            if (!l) return fail(std::move(l.error()).context("input line " + std::to_string(reader.line())));
            in.layers.push_back(std::move(*l));
        } else if (type == "rootfs") {
            auto r = mount::Rootfs::from_record(j);
            if (!r) return fail(std::move(r.error()).context("input line " + std::to_string(reader.line())));
            in.rootfs.push_back(std::move(*r));
        }
    }
    return in;
}

// --at: one rootfs (given, or made from the layers) assembled at a directory.
Result<int> assemble_at(const Context& ctx, const Opts& o, Input in) {
    if (in.rootfs.size() + (in.layers.empty() ? 0 : 1) != 1)
        return fail(make_error(Code::usage, "--at takes exactly one rootfs record or one stack of layers"));
    if (in.rootfs.empty()) {
        // A read-only view needs no sandbox directory.
        auto made = o.read_only ? mount::mount_stack(ctx.paths, in.layers, o.verify)
                                : mount::make_rootfs(ctx.paths, in.layers, o.id, o.verify);
        if (!made) return fail(made.error());
        if (made->id.empty()) made->id = o.id.empty() ? random_hex(kRootfsIdBytes) : o.id;
        in.rootfs.push_back(std::move(*made));
    }
    auto& rootfs = in.rootfs.front();
    mount::OverlaySpec spec{rootfs.lowerdirs, o.read_only ? "" : rootfs.upper, o.read_only ? "" : rootfs.work};
    // Build the overlay first: if it fails, nothing at DIR has changed.
    auto overlay = mount::make_overlay(spec);
    if (!overlay) return fail(overlay.error());
    if (auto r = fs::mkdir_p(o.at); !r) return fail(r.error());
    if (auto r = mount::attach(*overlay, o.at); !r) return fail(r.error());
    auto rec = rootfs.to_record();
    rec["at"] = o.at;
    rec["read_only"] = o.read_only;
    if (auto r = jsonl::emit(rec); !r) return fail(r.error());
    return 0;
}

Result<int> run(const Context& ctx, const Opts& o) {
    if (!o.id.empty() && o.count != 1) return fail(make_error(Code::usage, "--id names one rootfs: drop --count"));
    if (!o.at.empty() && o.count != 1) return fail(make_error(Code::usage, "--at assembles one rootfs: drop --count"));
    auto in = read_input(ctx.store(), o.refs);
    if (!in) return fail(in.error());
    if (!o.at.empty()) return assemble_at(ctx, o, std::move(*in));
    if (in->layers.empty()) {
        if (jsonl::upstream_failed()) return cli::kExitFailed;
        return fail(make_error(Code::usage, "no layers: name them, or pipe `dsec-layer ls NAME...` in"));
    }
    // The first record mounts what is missing; the rest find every layer mounted.
    for (size_t i = 0; i < o.count; i++) {
        if (cli::interrupted()) return fail(cli::interrupted_error());
        auto rootfs = mount::make_rootfs(ctx.paths, in->layers, o.id, o.verify && i == 0);
        if (!rootfs) return fail(rootfs.error());
        if (auto r = jsonl::emit(rootfs->to_record()); !r) return fail(r.error());
    }
    return 0;
}

}  // namespace

void add_stack(CLI::App& app, Context& ctx) {
    auto o = std::make_shared<Opts>();
    app.add_option("LAYER", o->refs, "layer names or digests, base first; none: read layer records from stdin");
    app.add_option("--count", o->count, "write N rootfs records, each with a fresh id and its own upper")
        ->type_name("N")
        ->check(CLI::Range(size_t(1), size_t(10'000'000)))
        ->capture_default_str();
    app.add_option("--id", o->id, "name the (one) rootfs instead of a random id")->type_name("ID");
    app.add_flag("--verify", o->verify, "check each layer's digest before its first mount");
    app.add_option("--at", o->at, "assemble the overlay of one rootfs at DIR in this mount namespace")
        ->type_name("DIR");
    app.add_flag("--read-only", o->read_only, "with --at: only the layers, no upper (nothing written)");
    app.callback([&ctx, o] {
        if (!ctx.action) ctx.action = [&ctx, o] { return run(ctx, *o); };
    });
}

}  // namespace dsec::mount_tool
