// dsec-run ls and inspect: what runs, from the state files and the cgroups.
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "dsec/layer/store.h"
#include "dsec/sandbox/activity.h"
#include "dsec/sandbox/detached.h"
#include "dsec/sandbox/listing.h"
#include "dsec/sandbox/live.h"
#include "dsec/sandbox/network.h"
#include "dsec/sys/parse.h"
#include "commands.h"
#include "dsec/cli/table.h"

namespace dsec::run_tool {

namespace {
// What `ls` keeps: all labels, the state, an age window, a layer in the stack.
struct LsFilter {
    std::vector<std::string> labels;
    std::string state, older_than, newer_than, layer;
};

struct LsMatch {
    std::vector<std::pair<std::string, std::string>> labels;
    std::string state;
    std::optional<int64_t> min_age_s, max_age_s;
    std::string digest, layer;  // the layer's digest when the store knows it, and as typed
};

Result<LsMatch> compile(const LsFilter& f, const Context& ctx) {
    LsMatch m;
    auto labels = parse::parse_labels(f.labels);
    if (!labels) return fail(labels.error());
    m.labels.assign(labels->begin(), labels->end());
    m.state = f.state;
    for (auto [text, out] : {std::pair{&f.older_than, &m.min_age_s}, std::pair{&f.newer_than, &m.max_age_s}}) {
        if (text->empty()) continue;
        auto ms = sandbox::parse_duration_ms(*text);
        if (!ms) return fail(ms.error());
        *out = int64_t(*ms / 1000);
    }
    m.layer = f.layer;
    if (!f.layer.empty())
        if (auto l = layer::Store(ctx.paths.layers()).resolve(f.layer); l) m.digest = l->digest;
    return m;
}

bool has_layer(const json& state, const LsMatch& m) {
    const json& rootfs = state.value("rootfs", json::object());
    for (auto& l : rootfs.value("layers", json::array())) {
        std::string digest = l.value("digest", ""), name = l.value("name", "");
        if ((!m.digest.empty() && digest == m.digest) || name == m.layer || digest == m.layer ||
            (m.layer.size() >= 12 && digest.rfind("sha256:" + m.layer, 0) == 0))
            return true;
    }
    return false;
}

bool matches(const sandbox::Paths& paths, const std::string& id, const json& rec, const LsMatch& m) {
    for (auto& [k, v] : m.labels)
        if (!rec["labels"].contains(k) || rec["labels"][k] != v) return false;
    if (!m.state.empty() && rec.value("state", "") != m.state) return false;
    int64_t age = rec.value("age_s", int64_t(0));
    if ((m.min_age_s && age < *m.min_age_s) || (m.max_age_s && age > *m.max_age_s)) return false;
    if (!m.layer.empty()) {
        auto state = sandbox::load(paths, id);
        if (!state || !has_layer(state->extra, m)) return false;
    }
    return true;
}
}  // namespace

void add_query(CLI::App& app, Context& ctx) {
    auto ls = app.add_subcommand("ls", "list sandboxes: id, state, age_s, memory, cpu_s, last_exec, labels");
    ls->footer(cli::example("  dsec-run ls; dsec-run ls -q --label job=eval\n"
                            "  dsec-run ls -q --state dead | xargs -r dsec-run destroy\n"
                            "  dsec-run ls --layer base --older-than 1h | dsec-run destroy -P 8\n"
                            "  dsec-run ls | jq -r 'select(.memory > 1e9) | .id'"));
    auto filter = std::make_shared<LsFilter>();
    auto flags = std::make_shared<cli::ListFlags>();
    ls->add_option("--label", filter->labels, "only sandboxes with this k=v label (repeatable: all must match)");
    ls->add_option("--state", filter->state, "only sandboxes in this state")
        ->check(CLI::IsMember({"running", "paused", "dead", "creating", "destroying", "broken"}));
    ls->add_option("--older-than", filter->older_than, "only sandboxes created at least this long ago, e.g. 1h");
    ls->add_option("--newer-than", filter->newer_than, "only sandboxes created at most this long ago, e.g. 10m");
    ls->add_option("--layer", filter->layer, "only sandboxes whose stack holds this layer (name or digest)");
    cli::add_list_flags(*ls, *flags);
    ls->callback([&ctx, filter, flags] {
        ctx.action = [&ctx, filter, flags]() -> Result<int> {
            auto paths = ctx.sandbox_paths();
            auto style = flags->style();
            auto match = compile(*filter, ctx);
            if (!match) return fail(match.error());
            cli::Table table({"ID", "STATE", "AGE", "MEM", "CPU", "LABELS"});
            for (auto& id : sandbox::list_ids(paths)) {
                auto live = sandbox::live_record(paths, id, false);
                if (!live) continue;
                json& rec = *live;
                if (!matches(paths, id, rec, *match)) continue;
                if (style == cli::ListStyle::records) {
                    if (auto r = jsonl::emit(rec); !r) return fail(r.error());
                    continue;
                }
                std::string labels;
                json tags = rec.value("labels", json::object());
                for (auto& [k, v] : tags.items())
                    labels += (labels.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
                char cpu[32] = "-";
                if (rec["cpu_s"].is_number()) std::snprintf(cpu, sizeof cpu, "%.1fs", rec["cpu_s"].get<double>());
                std::string mem = rec["memory"].is_number() ? cli::human_bytes(rec["memory"].get<uint64_t>()) : "-";
                table.add({id, rec.value("state", ""), cli::human_age(rec.value("age_s", 0.0)), mem, cpu, labels});
                if (style == cli::ListStyle::ids)
                    if (auto r = fs::write_all(STDOUT_FILENO, id + "\n"); !r) return fail(r.error());
            }
            if (style == cli::ListStyle::table)
                if (auto r = table.print(); !r) return fail(r.error());
            return 0;
        };
    });

    auto ids = std::make_shared<std::vector<std::string>>();
    auto inspect = app.add_subcommand("inspect", "show sandboxes' full records, with live memory and cpu");
    inspect->footer(cli::example("  dsec-run inspect box1 | jq .limits"));
    inspect->add_option("ID", *ids, "sandbox ids")->required();
    inspect->callback([&ctx, ids] {
        ctx.action = [&ctx, ids]() -> Result<int> {
            auto paths = ctx.sandbox_paths();
            int rc = 0;
            for (auto& id : *ids) {
                if (auto r = sandbox::check_id(id); !r) return fail(r.error());
                auto live = sandbox::live_record(paths, id, true);
                if (!live) {
                    cli::report(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id).about(id));
                    rc = cli::kExitFailed;
                    continue;
                }
                // Its detached execs (exec -d), with their state.
                if (auto execs = sandbox::list_detached(paths, id)) (*live)["execs"] = *execs;
                if (auto r = jsonl::emit(*live); !r) return fail(r.error());
            }
            return rc;
        };
    });
}

}  // namespace dsec::run_tool
