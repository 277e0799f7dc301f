#include "dsec/reclaim/ttl.h"

#include <algorithm>

#include "dsec/sandbox/activity.h"
#include "dsec/sandbox/sandbox.h"

namespace dsec::reclaim {

const char* expiry_name(Expiry e) {
    switch (e) {
        case Expiry::none: return "none";
        case Expiry::ttl: return "ttl";
        case Expiry::idle_ttl: return "idle_ttl";
    }
    return "?";
}

namespace {
// A positive number of seconds from the state, or 0 (null, missing, nonsense).
double limit_s(const json& state, const char* key) {
    auto it = state.find(key);
    return it != state.end() && it->is_number() && it->get<double>() > 0 ? it->get<double>() : 0;
}
}  // namespace

Expiry due(const json& state, int64_t now, int64_t last_use, bool busy) {
    int64_t created = state.value("created_unix", int64_t(0));
    if (created <= 0) return Expiry::none;
    if (double ttl = limit_s(state, "ttl"); ttl > 0 && double(now - created) >= ttl) return Expiry::ttl;
    double idle_ttl = limit_s(state, "idle_ttl");
    if (idle_ttl > 0 && !busy && double(now - std::max(created, last_use)) >= idle_ttl) return Expiry::idle_ttl;
    return Expiry::none;
}

Status enforce_ttl(const dsec::Paths& p, bool dry_run, const Report& report) {
    sandbox::Paths paths(p);
    for (auto& id : sandbox::list_ids(paths)) {
        auto state = sandbox::load(paths, id);
        if (!state) continue;  // half-made or gone: gc's to judge
        if (state->lifecycle != sandbox::Lifecycle::running) continue;
        const json& fields = state->extra;
        if (limit_s(fields, "ttl") <= 0 && limit_s(fields, "idle_ttl") <= 0) continue;
        // Held through the destroy: no exec starts in a sandbox judged idle.
        auto claim = sandbox::try_claim_idle(paths, id);
        bool busy = !claim && claim.error().code == Code::busy;
        if (!claim && !busy) continue;  // destroyed meanwhile
        int64_t now = sandbox::now_unix(), last = sandbox::last_use_unix(paths, id);
        Expiry why = due(fields, now, last, busy);
        if (why == Expiry::none) continue;
        int64_t created = fields.value("created_unix", now);
        json e = event("expired", id);
        e["reason"] = expiry_name(why);
        e["age_s"] = now - created;
        e["idle_s"] = now - std::max(created, last);
        e["dry_run"] = dry_run;
        if (!dry_run) {
            auto gone = sandbox::destroy(paths, id, sandbox::Missing::ok);
            if (!gone) {
                report.problem(std::move(gone.error()).context("destroying expired sandbox " + id));
                continue;
            }
        }
        if (auto r = report.event(std::move(e)); !r) return r;
    }
    return {};
}

}  // namespace dsec::reclaim
