#include "dsec/reclaim/pause.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "dsec/reclaim/status.h"
#include "dsec/sandbox/activity.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/state.h"
#include "dsec/sys/fs.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

namespace dsec::reclaim {

bool cpu_flat(uint64_t used_ns, int64_t sample_ms, double flat_cpu) {
    return double(used_ns) < double(sample_ms) * 1e6 * flat_cpu;
}

namespace {
// MADV_PAGEOUT over every mapping of `pid`, one range at a time: a range the kernel
// refuses (locked, special) does not stop the others.
void page_out(int pid) {
    Fd pidfd(int(::syscall(SYS_pidfd_open, pid, 0)));
    auto maps = fs::read_file("/proc/" + std::to_string(pid) + "/maps");
    if (!pidfd || !maps) return;
    std::istringstream in(*maps);
    std::string line;
    while (std::getline(in, line)) {
        if (line.find("[vsyscall]") != std::string::npos) continue;
        unsigned long start = 0, end = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx", &start, &end) != 2 || end <= start) continue;
        struct iovec iov = {reinterpret_cast<void*>(start), end - start};
        ::syscall(SYS_process_madvise, pidfd.get(), &iov, 1, MADV_PAGEOUT, 0);
    }
}

// v1: the limit lowered to the anonymous memory, so the kernel reclaims the group's page
// cache to get under it (or gives up: EBUSY), then put back as it was.
Status squeeze_v1(const std::string& dir, const MemoryUse& now) {
    std::string file = dir + "/memory.limit_in_bytes";
    auto old = fs::read_file(file);
    if (!old) return fail(old.error());
    std::string keep = old->substr(0, old->find('\n'));
    uint64_t target = now.charged > now.page_cache ? now.charged - now.page_cache : 0;
    target = std::max<uint64_t>(target, 1 << 20);
    (void)fs::write_text(file, std::to_string(target));  // EBUSY: as much as it could
    return fs::write_text(file, keep);
}
}  // namespace

Result<MemoryUse> push_out(const cgroup::Layout& layout, const cgroup::Cgroup& cg, const std::string& dir) {
    if (dir.empty()) return fail(make_error(Code::unsupported, "no memory controller for this sandbox"));
    auto before = memory_use(layout, dir);
    if (!before) return fail(before.error());
    if (layout.on_v1("memory")) {
        for (int pid : cg.pids()) page_out(pid);
        auto mid = memory_use(layout, dir);
        if (mid)
            if (auto r = squeeze_v1(dir, *mid); !r) return fail(r.error());
    } else {
        // EAGAIN: the kernel reclaimed less than asked (no swap for anonymous memory).
        if (auto r = fs::write_text(dir + "/memory.reclaim", std::to_string(before->charged)); !r && r.error().err != EAGAIN)
            return fail(r.error());
    }
    return memory_use(layout, dir);
}

Status pause_idle(const dsec::Paths& p, const IdleOptions& o, const Report& report) {
    sandbox::Paths paths(p);
    auto layout = cgroup::detect();
    if (!layout) return fail(layout.error());
    std::string parent = paths.cgroup_parent();
    // Candidates by state and last use, then one CPU sample for all of them together.
    struct Candidate {
        std::string id;
        uint64_t cpu_ns;
        int64_t idle_s;
        cgroup::Memcg memcg;
    };
    std::vector<Candidate> candidates;
    int64_t now = sandbox::now_unix();
    for (auto& id : sandbox::list_ids(paths)) {
        auto state = sandbox::load(paths, id);
        if (!state || live_state(p, id, *state) != "running") continue;
        int64_t idle = now - std::max(state->extra.value("created_unix", now), sandbox::last_use_unix(paths, id));
        if (idle < o.after_s) continue;
        cgroup::Memcg memcg = sandbox::memcg_of(*state);
        auto cpu = cgroup::Cgroup(*layout, parent, id, memcg).cpu_usage_ns();
        if (cpu) candidates.push_back({id, *cpu, idle, memcg});
    }
    if (!candidates.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(o.sample_ms));
    // Every second reading before any pause: pausing takes time, which must not count as
    // the sample of the ones after.
    std::erase_if(candidates, [&](const Candidate& c) {
        auto cpu = cgroup::Cgroup(*layout, parent, c.id, c.memcg).cpu_usage_ns();
        return !cpu || *cpu < c.cpu_ns || !cpu_flat(*cpu - c.cpu_ns, o.sample_ms, o.flat_cpu);
    });
    for (auto& c : candidates) {
        cgroup::Cgroup cg(*layout, parent, c.id, c.memcg);
        // Held while it freezes: an exec arriving meanwhile waits, then thaws it.
        auto claim = sandbox::try_claim_idle(paths, c.id);
        if (!claim) continue;  // an exec or cp runs (or it was destroyed)
        // A shared memory cgroup is other sandboxes' too: such a sandbox is only frozen.
        bool own = c.memcg == cgroup::Memcg::own;
        std::string dir = memory_dir(*layout, parent, c.id);
        std::optional<MemoryUse> before;
        if (own)
            if (auto m = memory_use(*layout, dir); m) before = *m;
        json e = event("paused", c.id);
        e["idle_s"] = c.idle_s;
        e["dry_run"] = o.dry_run;
        e["memcg"] = cgroup::memcg_name(c.memcg);
        if (!own) e["reclaim"] = "skipped: shared memory cgroup (frozen only)";
        if (before) e["before"] = before->to_json();
        if (!o.dry_run) {
            if (auto r = cg.freeze(); !r) {
                (void)cg.thaw();
                report.problem(std::move(r.error()).context("pausing sandbox " + c.id));
                continue;
            }
            if (!own) {
                if (auto r = report.event(std::move(e)); !r) return r;
                continue;
            }
            auto after = push_out(*layout, cg, dir);
            if (!after) {
                report.problem(std::move(after.error()).context("reclaiming memory of sandbox " + c.id));
            } else {
                e["after"] = after->to_json();
                if (before) e["reclaimed"] = before->charged > after->charged ? before->charged - after->charged : 0;
            }
        }
        if (auto r = report.event(std::move(e)); !r) return r;
    }
    return {};
}

Result<json> resume(const dsec::Paths& p, const std::string& id) {
    sandbox::Paths paths(p);
    if (auto r = sandbox::check_id(id); !r) return fail(r.error());
    if (!fs::exists(paths.state_dir(id)))
        return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id));
    auto found = sandbox::cgroup_of(paths, id);
    if (!found) return fail(found.error());
    const cgroup::Cgroup& cg = *found;
    bool was = cg.frozen();
    if (was)
        if (auto r = cg.thaw(); !r) return fail(r.error());
    json e = event("resumed", id);
    e["was_paused"] = was;
    return e;
}

}  // namespace dsec::reclaim
