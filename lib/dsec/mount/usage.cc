#include "dsec/mount/usage.h"

#include <signal.h>

#include <cerrno>

#include "dsec/sys/fs.h"

namespace dsec::mount {

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

}  // namespace dsec::mount
