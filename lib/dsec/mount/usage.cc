#include "dsec/mount/usage.h"

#include <signal.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "dsec/sys/fs.h"

namespace dsec::mount {

std::string sandboxes_dir(const std::string& run_dir) { return run_dir + "/sandboxes"; }

unsigned long long process_start(int pid) {
    auto stat = fs::read_file("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return 0;
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    auto close = stat->rfind(')');
    if (close == std::string::npos) return 0;
    std::string rest = stat->substr(close + 2);
    int field = 3;
    size_t pos = 0;
    while (field < 22 && pos != std::string::npos) {
        pos = rest.find(' ', pos);
        if (pos != std::string::npos) pos++;
        field++;
    }
    if (pos == std::string::npos) return 0;
    return std::strtoull(rest.c_str() + pos, nullptr, 10);
}

bool process_alive(int pid, unsigned long long start) {
    if (pid <= 0) return false;
    if (::kill(pid, 0) < 0 && errno == ESRCH) return false;
    // A zombie has exited and only waits for its parent: it runs nothing and holds no
    // namespace, so it counts as dead (field 3 of its stat is Z, or X while reaped).
    auto stat = fs::read_file("/proc/" + std::to_string(pid) + "/stat");
    auto close = stat ? stat->rfind(')') : std::string::npos;
    if (close == std::string::npos || close + 2 >= stat->size()) return false;
    char state = (*stat)[close + 2];
    if (state == 'Z' || state == 'X') return false;
    return start == 0 || process_start(pid) == start;
}

Result<std::map<std::string, size_t>> layer_users(const std::string& run_dir) {
    std::map<std::string, size_t> users;
    auto ids = fs::list_dir(sandboxes_dir(run_dir));
    if (!ids) return fail(ids.error());
    for (auto& id : *ids) {
        auto text = fs::read_file(sandboxes_dir(run_dir) + "/" + id + "/state.json");
        if (!text) continue;
        auto state = nlohmann::json::parse(*text, nullptr, false);
        if (state.is_discarded() || !state.is_object()) continue;
        int pid = state.value("pid", 0);
        unsigned long long start = state.value("pid_start", 0ULL);
        if (!process_alive(pid, start)) continue;
        auto rootfs = state.find("rootfs");
        if (rootfs == state.end() || !rootfs->is_object()) continue;
        for (auto& l : rootfs->value("layers", nlohmann::json::array()))
            if (l.is_object() && l.contains("digest") && l["digest"].is_string())
                users[l["digest"].get<std::string>()]++;
    }
    return users;
}

}  // namespace dsec::mount
