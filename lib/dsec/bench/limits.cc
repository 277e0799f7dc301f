#include "dsec/bench/limits.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>

#include "dsec/sys/fs.h"

namespace dsec::bench {

namespace {

std::string sysctl_path(std::string name) {
    std::replace(name.begin(), name.end(), '.', '/');
    return "/proc/sys/" + name;
}

int rlimit_resource(const std::string& name) {
    if (name == "RLIMIT_NOFILE") return RLIMIT_NOFILE;
    if (name == "RLIMIT_NPROC") return RLIMIT_NPROC;
    return -1;
}

Status write_limit(const std::string& name, uint64_t value) {
    if (int res = rlimit_resource(name); res >= 0) {
        struct rlimit rl;
        if (::getrlimit(res, &rl) < 0) return fail(sys_error("getrlimit", name));
        rl.rlim_cur = value;
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < value) rl.rlim_max = value;
        if (::setrlimit(res, &rl) < 0) return fail(sys_error("setrlimit", name));
        return {};
    }
    return fs::write_text(sysctl_path(name), std::to_string(value) + "\n");
}

}  // namespace

std::vector<std::pair<std::string, uint64_t>> limits_for(uint64_t sandboxes) {
    // An idle sandbox holds an init process, a few descriptors in the tools while it is
    // made, and its namespaces; the margins leave room for the rest of the host.
    uint64_t pids = sandboxes * 4 + 16384;
    return {{"kernel.pid_max", std::min<uint64_t>(pids, 4194304)},
            {"kernel.threads-max", pids},
            {"fs.file-max", sandboxes * 64 + 1048576},
            {"fs.nr_open", sandboxes * 8 + 1048576},
            {"RLIMIT_NOFILE", sandboxes * 8 + 65536},
            {"RLIMIT_NPROC", pids}};
}

Result<uint64_t> read_limit(const std::string& name) {
    if (int res = rlimit_resource(name); res >= 0) {
        struct rlimit rl;
        if (::getrlimit(res, &rl) < 0) return fail(sys_error("getrlimit", name));
        return rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : uint64_t(rl.rlim_cur);
    }
    auto text = fs::read_file(sysctl_path(name));
    if (!text) return fail(text.error());
    try {
        return std::stoull(*text);
    } catch (const std::exception&) {
        return fail(make_error(Code::bad_input, "not a number: " + *text, sysctl_path(name)));
    }
}

Status RaisedLimits::raise(const std::vector<std::pair<std::string, uint64_t>>& wanted) {
    for (auto& [name, minimum] : wanted) {
        auto now = read_limit(name);
        if (!now) return fail(now.error());
        if (*now >= minimum) continue;
        // nr_open bounds RLIMIT_NOFILE, so order in `wanted` matters: sysctls first.
        if (auto r = write_limit(name, minimum); !r) {
            int res = rlimit_resource(name);
            struct rlimit rl;
            if (res < 0 || r.error().err != EPERM || ::getrlimit(res, &rl) < 0)
                return fail(std::move(r.error()).context("raising limits"));
            rl.rlim_cur = rl.rlim_max;
            if (::setrlimit(res, &rl) < 0) return fail(sys_error("setrlimit", name).context("raising limits"));
            changes_.push_back({name, *now, uint64_t(rl.rlim_max),
                                "wanted " + std::to_string(minimum) + "; raising the hard limit needs CAP_SYS_RESOURCE (EPERM)"});
            continue;
        }
        changes_.push_back({name, *now, minimum, ""});
    }
    return {};
}

void RaisedLimits::restore() {
    for (auto it = changes_.rbegin(); it != changes_.rend(); ++it) (void)write_limit(it->name, it->before);
    changes_.clear();
}

nlohmann::json RaisedLimits::to_json() const {
    auto out = nlohmann::json::array();
    for (auto& c : changes_) {
        nlohmann::json j = {{"name", c.name}, {"before", c.before}, {"after", c.after}};
        if (!c.note.empty()) j["note"] = c.note;
        out.push_back(j);
    }
    return out;
}

}  // namespace dsec::bench
