#include "dsec/bench/memory.h"

#include <set>
#include <sstream>

#include "dsec/bench/stats.h"
#include "dsec/sys/fs.h"

namespace dsec::bench {

Result<HostMemory> host_memory() {
    auto text = fs::read_file("/proc/meminfo");
    if (!text) return fail(text.error());
    auto m = parse_meminfo(*text);
    return HostMemory{m["MemAvailable"], m["Committed_AS"], m["Slab"], m["SUnreclaim"]};
}

Result<uint64_t> process_pss(int pid) {
    auto text = fs::read_file("/proc/" + std::to_string(pid) + "/smaps_rollup");
    if (!text) return fail(text.error());
    return parse_meminfo(*text)["Pss"];
}

std::string memory_cgroup_of(const std::string& text) {
    std::istringstream in(text);
    std::string line, v2;
    while (std::getline(in, line)) {
        auto a = line.find(':');
        auto b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        std::string controllers = line.substr(a + 1, b - a - 1);
        std::string path = line.substr(b + 1);
        if (controllers.empty() && line.substr(0, a) == "0") v2 = path;
        std::istringstream cs(controllers);
        std::string c;
        while (std::getline(cs, c, ','))
            if (c == "memory") return "memory:" + path;
    }
    return v2.empty() ? "" : "v2:" + v2;
}

namespace {
Result<std::string> memory_cgroup_of_pid(int pid) {
    auto text = fs::read_file("/proc/" + std::to_string(pid) + "/cgroup");
    if (!text) return fail(text.error());
    return memory_cgroup_of(*text);
}

Result<uint64_t> group_memory(int pid, const std::string& cg) {
    std::string file;
    if (cg.rfind("memory:", 0) == 0) {
        file = "/sys/fs/cgroup/memory" + cg.substr(7) + "/memory.usage_in_bytes";
    } else if (cg.rfind("v2:", 0) == 0) {
        // On a pure v2 host the tree is /sys/fs/cgroup; on a hybrid one, unified/.
        file = "/sys/fs/cgroup" + cg.substr(3) + "/memory.current";
        if (!fs::exists(file)) file = "/sys/fs/cgroup/unified" + cg.substr(3) + "/memory.current";
    } else {
        return fail(make_error(Code::not_found, "no memory cgroup", "/proc/" + std::to_string(pid) + "/cgroup"));
    }
    auto value = fs::read_file(file);
    if (!value) return fail(value.error());
    try {
        return std::stoull(*value);
    } catch (const std::exception&) {
        return fail(make_error(Code::bad_input, "not a number", file));
    }
}
}  // namespace

Result<uint64_t> cgroup_memory_of(int pid) {
    auto cg = memory_cgroup_of_pid(pid);
    if (!cg) return fail(cg.error());
    return group_memory(pid, *cg);
}

uint64_t cgroup_memory_of(const std::vector<int>& pids) {
    std::set<std::string> seen;
    uint64_t sum = 0;
    for (int pid : pids) {
        auto cg = memory_cgroup_of_pid(pid);
        if (!cg || !seen.insert(*cg).second) continue;
        if (auto used = group_memory(pid, *cg); used) sum += *used;
    }
    return sum;
}

}  // namespace dsec::bench
