// dsec-layer ls and inspect: layer records, in the order asked.
#include <unistd.h>

#include <iostream>

#include "dsec/json/jsonl.h"
#include "commands.h"
#include "dsec/cli/table.h"
#include "dsec/sys/fs.h"

namespace dsec::layer_tool {

// Resolves one `ls` argument: a name, a digest (prefix) or label=KEY=VALUE.
static Result<std::vector<layer::Layer>> select(const layer::Store& store, const std::string& ref) {
    if (ref.rfind("label=", 0) == 0) {
        std::string kv = ref.substr(6);
        auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
            return fail(make_error(Code::usage, "\"" + ref + "\" is not of the form label=KEY=VALUE"));
        return store.with_label(kv.substr(0, eq), kv.substr(eq + 1));
    }
    auto one = store.resolve(ref);
    if (!one) return fail(one.error());
    return std::vector<layer::Layer>{*one};
}

// Every name of the layer goes with it: `rm NAME` removes one, and the user should see
// what else names the same layer.
static Status emit_layer(const layer::Store& store, const layer::Layer& l,
                         const std::map<std::string, std::string>& names) {
    auto rec = l.to_record(store.image_path(l.digest));
    std::vector<std::string> tags;
    for (auto& [n, d] : names)
        if (d == l.digest) tags.push_back(n);
    rec["names"] = tags;
    return jsonl::emit(rec);
}

// One listing in the style asked: records, a table, or digests only.
static Status print_layers(const layer::Store& store, const std::vector<layer::Layer>& layers,
                           const std::map<std::string, std::string>& names, cli::ListStyle style) {
    if (style == cli::ListStyle::records) {
        for (auto& l : layers)
            if (auto r = emit_layer(store, l, names); !r) return r;
        return {};
    }
    cli::Table table({"NAMES", "DIGEST", "SIZE", "FILES"});
    std::string ids;
    for (auto& l : layers) {
        std::string tags;
        for (auto& [n, d] : names)
            if (d == l.digest) tags += (tags.empty() ? "" : ",") + n;
        table.add({tags.empty() ? "-" : tags, l.hex().substr(0, 12), cli::human_bytes(l.size), std::to_string(l.files)});
        ids += l.digest + "\n";
    }
    return style == cli::ListStyle::table ? table.print() : fs::write_all(STDOUT_FILENO, ids);
}

void add_query(CLI::App& app, Context& ctx) {
    auto refs = std::make_shared<std::vector<std::string>>();
    auto flags = std::make_shared<cli::ListFlags>();
    auto* ls = app.add_subcommand("ls", "list layers as records, in the order asked (base first for dsec-mount)");
    ls->footer(cli::example("  dsec-layer ls; dsec-layer ls -q base\n  dsec-layer ls base python3.12 | dsec-mount | dsec-run create"));
    ls->add_option("REF", *refs, "layer name, digest prefix, or label=KEY=VALUE; none lists all");
    cli::add_list_flags(*ls, *flags);
    ls->callback([&ctx, refs, flags] {
        ctx.action = [&ctx, refs, flags]() -> Result<int> {
            auto store = ctx.store();
            auto names = store.names();
            if (!names) return fail(names.error());
            if (refs->empty()) {
                auto all = store.all();
                if (!all) return fail(all.error());
                if (auto r = print_layers(store, *all, *names, flags->style()); !r) return fail(r.error());
                return 0;
            }
            // Resolve everything first: a missing layer fails the whole stack, not half of it.
            std::vector<layer::Layer> out;
            for (auto& ref : *refs) {
                auto some = select(store, ref);
                if (!some) return fail(some.error());
                out.insert(out.end(), some->begin(), some->end());
            }
            if (auto r = print_layers(store, out, *names, flags->style()); !r) return fail(r.error());
            return 0;
        };
    });

    auto inspect_refs = std::make_shared<std::vector<std::string>>();
    auto* inspect = app.add_subcommand("inspect", "show a layer's full metadata, with its names and the image's path");
    inspect->footer(cli::example("  dsec-layer inspect base | jq .size"));
    inspect->add_option("REF", *inspect_refs, "layer name or digest prefix")->required();
    inspect->callback([&ctx, inspect_refs] {
        ctx.action = [&ctx, inspect_refs]() -> Result<int> {
            auto store = ctx.store();
            auto names = store.names();
            if (!names) return fail(names.error());
            for (auto& ref : *inspect_refs) {
                auto l = store.resolve(ref);
                if (!l) return fail(l.error());
                auto rec = l->to_record(store.image_path(l->digest));
                std::vector<std::string> tags;
                for (auto& [n, d] : *names)
                    if (d == l->digest) tags.push_back(n);
                rec["names"] = tags;
                rec["meta"] = store.meta_path(l->digest);
                if (auto r = jsonl::emit(rec); !r) return fail(r.error());
            }
            return 0;
        };
    });
}

}  // namespace dsec::layer_tool
