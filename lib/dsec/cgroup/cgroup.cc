#include "dsec/cgroup/cgroup.h"


#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <sstream>
#include <thread>

#include "dsec/sys/fs.h"
#include "dsec/sys/process.h"
#include "dsec/sys/sha256.h"

namespace dsec::cgroup {

namespace {
constexpr uint64_t kCpuPeriodUs = 100000;

Result<uint64_t> read_number(const std::string& path) {
    auto text = fs::read_file(path);
    if (!text) return fail(text.error());
    return std::strtoull(text->c_str(), nullptr, 10);
}

// "key value" lines (memory.events, cpu.stat, memory.oom_control).
uint64_t read_key(const std::string& path, const std::string& key) {
    auto text = fs::read_file(path);
    if (!text) return 0;
    std::istringstream in(*text);
    std::string k;
    uint64_t v;
    while (in >> k >> v)
        if (k == key) return v;
    return 0;
}

// Pss of a process in bytes, from the "Pss:  N kB" line of its smaps_rollup.
Result<uint64_t> process_pss(int pid) {
    auto text = fs::read_file("/proc/" + std::to_string(pid) + "/smaps_rollup");
    if (!text) return fail(text.error());
    auto pss = proc::status_field(*text, "Pss");
    if (!pss) return uint64_t(0);  // a kernel thread, or a process exiting
    return std::strtoull(std::string(*pss).c_str(), nullptr, 10) * 1024;
}

// Waits a little longer each round: cgroup teardown is asynchronous in the kernel.
void backoff(int round) { std::this_thread::sleep_for(std::chrono::microseconds(round < 10 ? 200 : 5000)); }
constexpr int kRounds = 1000;  // about five seconds in all
}  // namespace

Cgroup::Cgroup(Layout layout, const std::string& parent, std::string id, Memcg memcg)
    : layout_(std::move(layout)), parent_(parent), id_(std::move(id)), memcg_(memcg) {
    auto placed = place(layout_, parent_, id_, memcg_);
    // A layout that cannot share falls back to the own placement for everything but
    // create(), which refuses it: destroy and gc still find what an own create made.
    if (!placed) {
        placed_ = fail(placed.error());
        placed = place(layout_, parent_, id_, Memcg::own);
    }
    if (placed) placement_ = std::move(*placed);
}

std::string Cgroup::dir_for(const std::string& controller) const {
    if (controller == "memory") return placement_.memory;
    auto it = layout_.v1.find(controller);
    if (it != layout_.v1.end()) return it->second + "/" + parent_ + "/" + id_;
    return placement_.unified;
}

bool Cgroup::in_part(const std::string& dir, Part part) const {
    if (part == Part::all) return true;
    const std::string& memory = layout_.on_v1("memory") ? layout_.v1.at("memory") : layout_.unified;
    bool early = dir == placement_.unified || dir == placement_.shared || dir.starts_with(memory + "/");
    return early == (part == Part::early);
}

std::vector<std::string> Cgroup::v1_join_files(Part part) const {
    std::vector<std::string> out;
    for (auto& d : placement_.join)
        if (d != placement_.unified && in_part(d, part)) out.push_back(d + "/tasks");
    return out;
}

Status Cgroup::create(const Limits& limits, Part part) const {
    if (!placed_) return placed_;
    if (memcg_ == Memcg::shared && limits.memory)
        return fail(make_error(Code::usage, "a memory limit (--memory, or a policy's) needs the sandbox's own memory "
                                            "cgroup (--memcg own): a shared one has no per-sandbox limit"));
    if (part == Part::late) return create_dirs(limits, part);
    if (layout_.mode == Mode::v2) {
        // Controllers must be enabled from the root down to dsec/ for dsec/<id> to have them.
        (void)fs::mkdir_p(layout_.unified + "/" + parent_);
        for (const char* c : {"+memory", "+cpu", "+pids"}) {
            (void)fs::write_text(layout_.unified + "/cgroup.subtree_control", c);
            (void)fs::write_text(layout_.unified + "/" + parent_ + "/cgroup.subtree_control", c);
        }
    }
    if (!placement_.shared.empty()) {
        if (auto r = fs::mkdir_p(placement_.shared); !r) return r;
        // v2: the children get cpu and pids of their own, never memory (that is the point).
        if (placement_.shared + "/" + id_ == placement_.unified)
            for (const char* c : {"+cpu", "+pids"}) (void)fs::write_text(placement_.shared + "/cgroup.subtree_control", c);
    }
    return create_dirs(limits, part);
}

Status Cgroup::create_dirs(const Limits& limits, Part part) const {
    for (auto& d : placement_.dirs) {
        if (!in_part(d, part)) continue;
        // ENOENT: dsec-reclaim gc removed the (then empty) parent between the two mkdirs.
        Status made = fs::mkdir_p(d);
        for (int again = 0; !made && made.error().err == ENOENT && again < 3; again++) made = fs::mkdir_p(d);
        if (!made) return fail(made.error());
    }
    // A limit's directory, or "" when it belongs to the other part.
    auto need = [&](const char* ctrl, const std::string& file) -> Result<std::string> {
        std::string dir = dir_for(ctrl);
        if (!dir.empty() && !in_part(dir, part)) return std::string();
        if (dir.empty() || !fs::exists(dir + "/" + file))
            return fail(make_error(Code::unsupported, std::string("no ") + ctrl + " controller for this cgroup", dir));
        return dir;
    };
    if (limits.memory) {
        bool v1 = layout_.on_v1("memory");
        auto dir = need("memory", v1 ? "memory.limit_in_bytes" : "memory.max");
        if (!dir) return fail(dir.error());
        std::string v = std::to_string(limits.memory);
        if (dir->empty()) {
            // made with the other part
        } else if (v1) {
            if (auto r = fs::write_text(*dir + "/memory.limit_in_bytes", v); !r) return r;
            // memsw caps memory+swap: without it a sandbox could swap its way past the limit.
            if (fs::exists(*dir + "/memory.memsw.limit_in_bytes"))
                if (auto r = fs::write_text(*dir + "/memory.memsw.limit_in_bytes", v); !r) return r;
        } else {
            if (auto r = fs::write_text(*dir + "/memory.max", v); !r) return r;
            // v2 has no memory+swap knob: swap is capped on its own, at as much again, so
            // that a sandbox can be swapped out when idle but never swap without bound.
            if (fs::exists(*dir + "/memory.swap.max"))
                if (auto r = fs::write_text(*dir + "/memory.swap.max", v); !r) return r;
        }
    }
    if (limits.cpus > 0) {
        uint64_t quota = uint64_t(limits.cpus * double(kCpuPeriodUs));
        if (quota < 1000) quota = 1000;  // the kernel's minimum quota is 1 ms
        bool v1 = layout_.on_v1("cpu");
        auto dir = need("cpu", v1 ? "cpu.cfs_quota_us" : "cpu.max");
        if (!dir) return fail(dir.error());
        if (dir->empty()) {
            // made with the other part
        } else if (v1) {
            if (auto r = fs::write_text(*dir + "/cpu.cfs_period_us", std::to_string(kCpuPeriodUs)); !r) return r;
            if (auto r = fs::write_text(*dir + "/cpu.cfs_quota_us", std::to_string(quota)); !r) return r;
        } else {
            if (auto r = fs::write_text(*dir + "/cpu.max", std::to_string(quota) + " " + std::to_string(kCpuPeriodUs)); !r)
                return r;
        }
    }
    if (limits.cpu_weight) {
        // v1's cpu.shares is 1024 where v2's cpu.weight is 100 (and at least 2).
        bool v1 = layout_.on_v1("cpu");
        auto dir = need("cpu", v1 ? "cpu.shares" : "cpu.weight");
        if (!dir) return fail(dir.error());
        uint64_t value = v1 ? std::max<uint64_t>(2, limits.cpu_weight * 1024 / 100) : limits.cpu_weight;
        if (!dir->empty())
            if (auto r = fs::write_text(*dir + (v1 ? "/cpu.shares" : "/cpu.weight"), std::to_string(value)); !r)
                return r;
    }
    if (limits.pids) {
        auto dir = need("pids", "pids.max");
        if (!dir) return fail(dir.error());
        if (!dir->empty())
            if (auto r = fs::write_text(*dir + "/pids.max", std::to_string(limits.pids)); !r) return r;
    }
    return {};
}

Result<uint64_t> Cgroup::memory_usage() const {
    if (memcg_ == Memcg::shared) {
        uint64_t sum = 0;
        for (int pid : pids())
            if (auto pss = process_pss(pid); pss) sum += *pss;  // a process gone meanwhile counts 0
        return sum;
    }
    if (layout_.on_v1("memory")) return read_number(dir_for("memory") + "/memory.usage_in_bytes");
    return read_number(placement_.unified + "/memory.current");
}

Result<uint64_t> Cgroup::cpu_usage_ns() const {
    if (layout_.on_v1("cpuacct")) return read_number(dir_for("cpuacct") + "/cpuacct.usage");
    if (!fs::exists(placement_.unified + "/cpu.stat")) return fail(make_error(Code::unsupported, "no cpu accounting", placement_.unified));
    return read_key(placement_.unified + "/cpu.stat", "usage_usec") * 1000;
}

uint64_t Cgroup::oom_kills() const {
    if (layout_.on_v1("memory")) return read_key(dir_for("memory") + "/memory.oom_control", "oom_kill");
    return read_key(placement_.unified + "/memory.events", "oom_kill");
}

std::vector<int> Cgroup::pids() const {
    // The sandbox's own groups only: a shared memory group holds other sandboxes' too.
    for (auto& d : placement_.dirs) {
        auto text = fs::read_file(d + "/cgroup.procs");
        if (!text) continue;
        std::vector<int> out;
        std::istringstream in(*text);
        int pid;
        while (in >> pid) out.push_back(pid);
        return out;
    }
    return {};
}

namespace {
// Which freezer a group uses: the unified tree's cgroup.freeze (any cgroup2 group has it,
// controllers or not), else the v1 freezer hierarchy.
struct Freezer {
    std::string file;  // cgroup.freeze or freezer.state
    bool v2 = false;
};

Result<Freezer> freezer_of(const std::string& unified, const std::string& v1_dir) {
    if (!unified.empty() && fs::exists(unified + "/cgroup.freeze")) return Freezer{unified + "/cgroup.freeze", true};
    if (!v1_dir.empty() && fs::exists(v1_dir + "/freezer.state")) return Freezer{v1_dir + "/freezer.state", false};
    return fail(make_error(Code::unsupported, "no cgroup freezer for this sandbox", unified.empty() ? v1_dir : unified));
}
}  // namespace

Status Cgroup::freeze() const {
    auto f = freezer_of(placement_.unified, layout_.on_v1("freezer") ? dir_for("freezer") : "");
    if (!f) return fail(f.error());
    if (auto r = fs::write_text(f->file, f->v2 ? "1" : "FROZEN"); !r) return r;
    for (int round = 0; round < kRounds; round++) {
        if (f->v2) {
            if (read_key(placement_.unified + "/cgroup.events", "frozen") == 1) return {};
        } else {
            auto state = fs::read_file(f->file);
            if (state && state->rfind("FROZEN", 0) == 0) return {};
        }
        backoff(round);
    }
    return fail(make_error(Code::busy, "the sandbox's processes did not freeze", f->file));
}

Status Cgroup::thaw() const {
    auto f = freezer_of(placement_.unified, layout_.on_v1("freezer") ? dir_for("freezer") : "");
    if (!f) return fail(f.error());
    return fs::write_text(f->file, f->v2 ? "0" : "THAWED");
}

bool Cgroup::frozen() const {
    auto f = freezer_of(placement_.unified, layout_.on_v1("freezer") ? dir_for("freezer") : "");
    if (!f) return false;
    auto state = fs::read_file(f->file);
    if (!state) return false;
    return f->v2 ? state->rfind("1", 0) == 0 : state->rfind("THAWED", 0) != 0;
}

Status Cgroup::kill_all() const {
    bool have_kill = !placement_.unified.empty() && fs::exists(placement_.unified + "/cgroup.kill");
    std::string freezer = layout_.on_v1("freezer") ? dir_for("freezer") : "";
    if (!freezer.empty() && !fs::exists(freezer + "/freezer.state")) freezer.clear();
    for (int round = 0; round < kRounds; round++) {
        auto left = pids();
        if (left.empty()) return {};
        if (have_kill) {
            (void)fs::write_text(placement_.unified + "/cgroup.kill", "1");
        } else {
            // Frozen tasks cannot fork while we kill them one by one; SIGKILL lands on thaw.
            if (!freezer.empty()) (void)fs::write_text(freezer + "/freezer.state", "FROZEN");
            for (int pid : pids()) ::kill(pid, SIGKILL);
            if (!freezer.empty()) (void)fs::write_text(freezer + "/freezer.state", "THAWED");
        }
        backoff(round);
    }
    return fail(make_error(Code::busy, "processes survive in the sandbox's cgroup", placement_.dirs.empty() ? "" : placement_.dirs.front()));
}

Status Cgroup::remove() const {
    if (auto r = kill_all(); !r) return r;
    for (auto& d : placement_.dirs) {
        for (int round = 0;; round++) {
            if (::rmdir(d.c_str()) == 0 || errno == ENOENT) break;
            // EBUSY: exiting tasks are still being unlinked from the cgroup.
            if (errno != EBUSY || round >= kRounds) return fail(sys_error("rmdir", d));
            backoff(round);
        }
    }
    // An older dsec's groups in hierarchies no longer used: emptied with the rest above.
    for (auto& d : placement_.unused) (void)::rmdir(d.c_str());
    return {};
}

std::string parent_for_run(const std::string& run_dir) {
    if (run_dir == "/run/dsec") return "dsec";
    Sha256 sha;
    sha.update(run_dir);
    return "dsec-" + sha.hex().substr(0, 12);
}

void remove_parent_if_empty(const std::string& name) {
    auto layout = detect();
    if (!layout) return;
    for (auto& [controller, root] : layout->v1) ::rmdir((root + "/" + name).c_str());
    if (!layout->unified.empty()) ::rmdir((layout->unified + "/" + name).c_str());
}

}  // namespace dsec::cgroup
