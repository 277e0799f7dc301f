#include "dsec/bench/stats.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <sstream>

#include "dsec/sys/fs.h"

namespace dsec::bench {

json Summary::to_json(const std::string& unit) const {
    return {{"unit", unit}, {"n", n},     {"min", min}, {"median", median}, {"p90", p90},
            {"p99", p99},   {"max", max}, {"mean", mean}};
}

double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0;
    p = std::clamp(p, 0.0, 100.0);
    double rank = p / 100.0 * double(sorted.size() - 1);
    auto lo = size_t(std::floor(rank));
    auto hi = std::min(lo + 1, sorted.size() - 1);
    double frac = rank - double(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::vector<double> samples) {
    Summary s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    s.n = samples.size();
    s.min = samples.front();
    s.max = samples.back();
    s.median = percentile(samples, 50);
    s.p90 = percentile(samples, 90);
    s.p99 = percentile(samples, 99);
    s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / double(s.n);
    return s;
}

std::vector<double> pair_ratios(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> out;
    for (size_t i = 0; i < std::min(a.size(), b.size()); i++)
        if (b[i] > 0) out.push_back(a[i] / b[i]);
    return out;
}

double median(std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    return percentile(samples, 50);
}

json StateFs::to_json() const {
    json j{{"path", path}, {"type", type}};
    if (journal) j["journal"] = *journal;
    return j;
}

std::optional<bool> ext4_journal_from_task(const std::string& text) {
    std::string t = text.substr(0, text.find_last_not_of(" \n") + 1);
    if (t == "<none>") return false;
    if (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos) return true;
    return std::nullopt;
}

namespace {
std::string fs_type_name(unsigned long magic) {
    switch (magic) {
    case EXT4_SUPER_MAGIC: return "ext4";  // ext2 and ext3 share the magic
    case TMPFS_MAGIC: return "tmpfs";
    case XFS_SUPER_MAGIC: return "xfs";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case OVERLAYFS_SUPER_MAGIC: return "overlay";
    case NFS_SUPER_MAGIC: return "nfs";
    case 0x2fc12fc1: return "zfs";
    case 0x65735546: return "fuse";
    }
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%lx", magic);
    return hex;
}
}  // namespace

Result<StateFs> state_fs(const std::string& dir) {
    struct statfs sf;
    if (::statfs(dir.c_str(), &sf) < 0) return fail(sys_error("statfs", dir));
    StateFs out{dir, fs_type_name((unsigned long)sf.f_type), std::nullopt};
    struct stat st;
    if (out.type == "ext4" && ::stat(dir.c_str(), &st) == 0) {
        // /sys/dev/block/MAJ:MIN names the device, /sys/fs/ext4/NAME its journal task.
        std::error_code ec;
        auto dev = std::filesystem::read_symlink("/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" +
                                                     std::to_string(minor(st.st_dev)), ec);
        if (!ec)
            if (auto task = fs::read_file("/sys/fs/ext4/" + dev.filename().string() + "/journal_task"))
                out.journal = ext4_journal_from_task(*task);
    }
    return out;
}

json Machine::to_json() const {
    json j{{"cores", cores},
           {"memory_bytes", memory_bytes},
           {"kernel", kernel},
           {"cgroup_mode", cgroup_mode},
           {"cpu_model", cpu_model}};
    if (state_fs) j["state_fs"] = state_fs->to_json();
    if (rcu_expedited) j["rcu_expedited"] = *rcu_expedited;
    return j;
}

std::map<std::string, uint64_t> parse_meminfo(const std::string& text) {
    std::map<std::string, uint64_t> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::istringstream rest(line.substr(colon + 1));
        uint64_t value = 0;
        std::string unit;
        if (!(rest >> value)) continue;
        rest >> unit;
        out[line.substr(0, colon)] = unit == "kB" ? value * 1024 : value;
    }
    return out;
}

std::string cpu_model_from_cpuinfo(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string key = line.substr(0, colon);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
        if (key != "model name" && key != "Processor" && key != "cpu model") continue;
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        return value;
    }
    return "";
}

std::string cgroup_mode_from_mounts(const std::string& mounts) {
    bool v1 = false, v2 = false, v2_at_root = false;
    std::istringstream in(mounts);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string source, target, type;
        if (!(fields >> source >> target >> type)) continue;
        if (type == "cgroup2") {
            v2 = true;
            if (target == "/sys/fs/cgroup") v2_at_root = true;
        } else if (type == "cgroup") {
            v1 = true;
        }
    }
    if (v2_at_root && !v1) return "v2";
    if (v1 && v2) return "hybrid";
    if (v1) return "v1";
    if (v2) return "v2";
    return "none";
}

Machine read_machine() {
    Machine m;
    long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    m.cores = n > 0 ? unsigned(n) : 0;
    if (auto mi = fs::read_file("/proc/meminfo")) m.memory_bytes = parse_meminfo(*mi)["MemTotal"];
    struct utsname u;
    if (::uname(&u) == 0) m.kernel = u.release;
    if (auto mounts = fs::read_file("/proc/self/mounts")) m.cgroup_mode = cgroup_mode_from_mounts(*mounts);
    if (auto ci = fs::read_file("/proc/cpuinfo")) m.cpu_model = cpu_model_from_cpuinfo(*ci);
    if (const char* root = std::getenv("DSEC_ROOT"); root && *root)
        if (auto f = state_fs(root)) m.state_fs = std::move(*f);
    if (auto rcu = fs::read_file("/sys/kernel/rcu_expedited"); rcu && !rcu->empty()) m.rcu_expedited = (*rcu)[0] != '0';
    return m;
}

}  // namespace dsec::bench
