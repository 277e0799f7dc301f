#include "dsec/reclaim/memory.h"

#include <sstream>

#include "dsec/sys/fs.h"

namespace dsec::reclaim {

nlohmann::json MemoryUse::to_json() const {
    return {{"memory", charged}, {"resident", resident}, {"page_cache", page_cache}, {"swapped", swapped}};
}

uint64_t stat_value(std::string_view text, std::string_view key) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        // "key value" or, in /proc/meminfo, "Key:   value kB".
        if (line.size() > key.size() && line.substr(0, key.size()) == key &&
            (line[key.size()] == ' ' || line[key.size()] == ':'))
            return std::strtoull(std::string(line.substr(key.size() + 1)).c_str(), nullptr, 10);
        pos = end + 1;
    }
    return 0;
}

MemoryUse parse_memory_stat(std::string_view text, bool v1) {
    MemoryUse m;
    m.resident = stat_value(text, v1 ? "total_rss" : "anon");
    m.page_cache = stat_value(text, v1 ? "total_cache" : "file");
    if (v1) m.swapped = stat_value(text, "total_swap");
    return m;
}

std::string memory_dir(const cgroup::Layout& layout, const std::string& parent, const std::string& id) {
    if (layout.on_v1("memory")) return layout.v1.at("memory") + "/" + parent + "/" + id;
    if (layout.mode == cgroup::Mode::v2) return layout.unified + "/" + parent + "/" + id;
    return "";
}

Result<MemoryUse> memory_use(const cgroup::Layout& layout, const std::string& dir) {
    bool v1 = layout.on_v1("memory");
    auto stat = fs::read_file(dir + "/memory.stat");
    if (!stat) return fail(stat.error());
    MemoryUse m = parse_memory_stat(*stat, v1);
    if (auto charged = fs::read_file(dir + (v1 ? "/memory.usage_in_bytes" : "/memory.current")); charged)
        m.charged = std::strtoull(charged->c_str(), nullptr, 10);
    if (!v1)
        if (auto swap = fs::read_file(dir + "/memory.swap.current"); swap)
            m.swapped = std::strtoull(swap->c_str(), nullptr, 10);
    return m;
}

nlohmann::json parse_psi(std::string_view text) {
    nlohmann::json out = nlohmann::json::object();
    std::istringstream in{std::string(text)};
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string kind, field;
        if (!(words >> kind)) continue;
        nlohmann::json row = nlohmann::json::object();
        while (words >> field) {
            auto eq = field.find('=');
            if (eq == std::string::npos) continue;
            std::string key = field.substr(0, eq), value = field.substr(eq + 1);
            if (key == "total") row[key] = std::strtoull(value.c_str(), nullptr, 10);
            else row[key] = std::strtod(value.c_str(), nullptr);
        }
        out[kind] = row;
    }
    return out;
}

nlohmann::json host_record() {
    nlohmann::json h = {{"type", "host"}, {"v", 1}};
    if (auto meminfo = fs::read_file("/proc/meminfo"); meminfo) {
        auto kib = [&](const char* key) { return stat_value(*meminfo, key) * 1024; };
        h["memory_total"] = kib("MemTotal");
        h["memory_available"] = kib("MemAvailable");
        h["page_cache"] = kib("Cached");
        h["swap_total"] = kib("SwapTotal");
        h["swap_free"] = kib("SwapFree");
        h["unreclaimable_slab"] = kib("SUnreclaim");
    }
    if (auto psi = fs::read_file("/proc/pressure/memory"); psi) h["psi_memory"] = parse_psi(*psi);
    return h;
}

}  // namespace dsec::reclaim
