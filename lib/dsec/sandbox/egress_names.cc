#include "dsec/sandbox/egress_names.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "dsec/guard/hosts.h"
#include "dsec/sys/process.h"
#include "dsec/net/cut.h"
#include "dsec/net/egress.h"
#include "dsec/net/resolve.h"
#include "dsec/sandbox/open.h"
#include "dsec/sandbox/user.h"
#include "dsec/sys/fd.h"

namespace dsec::sandbox {

namespace {
// Rewrites the bound file in place: a rename would leave the bind on the old inode.
Status rewrite_in_place(const std::string& path, const std::string& text) {
    Fd f(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!f) return fail(sys_error("open", path));
    if (::pwrite(f.get(), text.data(), text.size(), 0) != ssize_t(text.size())) return fail(sys_error("pwrite", path));
    if (::ftruncate(f.get(), off_t(text.size())) < 0) return fail(sys_error("ftruncate", path));
    return {};
}
}  // namespace

Result<json> resolve_names(const guard::NetworkRules& rules, const json& known) {
    json out = json::object();
    for (auto& name : guard::domains_of(rules)) {
        if (known.is_object() && known.contains(name)) {
            out[name] = known[name];
            continue;
        }
        auto addresses = net::resolve_name(name);
        if (!addresses) return fail(addresses.error());
        out[name] = {{"addresses", *addresses}, {"resolved", now_rfc3339()}};
    }
    return out;
}

guard::Resolved resolved_of(const json& names) {
    guard::Resolved out;
    if (!names.is_object()) return out;
    for (auto& [name, entry] : names.items()) {
        auto& list = out[name];
        if (entry.is_object() && entry.contains("addresses") && entry["addresses"].is_array())
            for (auto& a : entry["addresses"])
                if (a.is_string()) list.push_back(a.get<std::string>());
    }
    return out;
}

Status write_hosts(const Paths& paths, const std::string& id, int init_pid, json& egress) {
    json names = egress.value("names", json::object());
    std::string bound = egress.value("hosts", "");
    if (names.empty() && bound.empty()) return {};
    std::string when = now_rfc3339();
    if (!bound.empty()) {
        // The host's own file: nothing the sandbox wrote is read back.
        auto base = fs::read_file(bound);
        if (!base) return fail(base.error());
        return rewrite_in_place(bound, guard::hosts_text(*base, resolved_of(names), when));
    }
    // An image without /etc/hosts starts from an empty one (bind_hosts makes the file).
    auto base = read_inside(init_pid, "/etc/hosts");
    if (!base && base.error().err == ENOENT) base = std::string();
    if (!base) return fail(std::move(base.error()).context("the sandbox's /etc/hosts, which the policy's names go in"));
    std::string file = paths.state_dir(id) + "/hosts";
    if (auto r = fs::atomic_write(file, guard::hosts_text(*base, resolved_of(names), when), 0644); !r)
        return fail(r.error());
    if (auto r = guard::bind_hosts(init_pid, proc::process_start(init_pid), file); !r) return fail(r.error());
    egress["hosts"] = file;
    return {};
}

Result<Refreshed> refresh_names(const Paths& paths, const std::string& id) {
    auto opened = open_sandbox(paths, id, Need::running_init);
    if (!opened) return fail(opened.error());
    State* state = &opened->state;
    Refreshed out;
    out.record = {{"type", "refresh"}, {"v", 1}, {"id", id}, {"names", json::object()}, {"changed", false}, {"cut", 0}};
    json& fields = state->extra;
    if (!fields.contains("egress") || !fields["egress"].is_object()) return out;
    json& egress = fields["egress"];
    json next = json::object();
    bool changed = false;
    const json before = egress.value("names", json::object());
    for (auto& [name, was] : before.items()) {
        json shown = was;
        auto addresses = net::resolve_name(name);
        if (!addresses) {
            shown["error"] = addresses.error().detail();
            out.warnings.push_back(addresses.error().detail() + "; sandbox " + id + " keeps the addresses resolved at " +
                                   was.value("resolved", "?"));
        } else {
            if (json(*addresses) != was.value("addresses", json::array())) {
                shown["was"] = was.value("addresses", json::array());
                changed = true;
            }
            shown["addresses"] = *addresses;
            shown["resolved"] = now_rfc3339();
        }
        next[name] = {{"addresses", shown["addresses"]}, {"resolved", shown["resolved"]}};
        out.record["names"][name] = shown;
    }
    egress["names"] = next;
    if (changed) {
        auto rules = guard::network_from_record(fields["guard"].value("network", json::object()));
        if (!rules) return fail(rules.error());
        auto table = guard::compile_rules(*rules, resolved_of(next));
        if (!table) return fail(table.error());
        if (auto r = net::update_egress(paths.run, id, *table); !r) return fail(r.error());
        auto cut = net::cut_connections(state->pid, *table);
        if (!cut) return fail(std::move(cut.error()).context("the new addresses are in force, but cutting connections"));
        out.record["cut"] = *cut;
        if (auto r = write_hosts(paths, id, state->pid, egress); !r) return fail(r.error());
    }
    out.record["changed"] = changed;
    if (auto r = save(paths, *state); !r) return fail(r.error());
    return out;
}

}  // namespace dsec::sandbox
