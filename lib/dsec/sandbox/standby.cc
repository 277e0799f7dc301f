#include "dsec/sandbox/standby.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <sstream>

#include "dsec/guard/files.h"
#include "dsec/sys/process.h"
#include "dsec/sandbox/bind.h"
#include "dsec/sandbox/cpu_class.h"
#include "dsec/sandbox/policy.h"
#include "dsec/sandbox/sandbox.h"

namespace dsec::sandbox {

namespace {
constexpr const char* kStandbyPrefix = "standby-";

std::string basename_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// A new directory for an init's upper and work: standby-<nanoseconds>, unique per sandbox
// (its lock is held).
Result<std::string> new_upper_dir(const Paths& paths, const std::string& id) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch());
    // (The sandbox's data directory is missing when its rootfs came with an id of its own.)
    if (::mkdir(paths.data_dir(id).c_str(), 0700) < 0 && errno != EEXIST) return fail(sys_error("mkdir", paths.data_dir(id)));
    std::string dir = paths.data_dir(id) + "/" + kStandbyPrefix + std::to_string(ns.count());
    if (::mkdir(dir.c_str(), 0700) < 0) return fail(sys_error("mkdir", dir));
    // The modes dsec-mount gives a rootfs's upper and work.
    for (auto [name, mode] : {std::pair{"/upper", 0755u}, {"/work", 0700u}}) {
        std::string path = dir + name;
        if (::mkdir(path.c_str(), mode) < 0 || ::chmod(path.c_str(), mode) < 0) {
            Error e = sys_error("mkdir", path);
            (void)fs::remove_tree(dir);
            return fail(std::move(e));
        }
    }
    return dir;
}

Status kill_pid(int pid, unsigned long long start) {
    Fd pidfd(int(::syscall(SYS_pidfd_open, pid, 0)));
    // Re-checked once the pidfd pins the process: the pid may have been reused.
    if (!pidfd || !proc::process_alive(pid, start)) return {};
    if (::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0) < 0 && errno != ESRCH)
        return fail(sys_error("pidfd_send_signal", std::to_string(pid)));
    return {};
}
}  // namespace

Result<StartSpec> start_spec_of(const Paths& paths, const State& st) {
    // The security, limits, hostname, cpu class and binds create recorded, which their
    // areas read from the state's other fields.
    const json& state = st.extra;
    auto sec = security_from_state(state);
    if (!sec) return fail(sec.error());
    auto init_program = find_init();
    if (!init_program) return fail(init_program.error());
    const std::string& id = st.id;
    StartSpec spec;
    spec.id = id;
    spec.hostname = state.value("hostname", id.substr(0, 63));
    spec.init_program = *init_program;
    spec.security = *sec;
    const json& sec_state = state.contains("security") && state["security"].is_object() ? state["security"] : json::object();
    spec.ids.host_first = sec_state.value("host_uid", 0u);
    spec.ids.slot = sec_state.value("slot", 0u);
    const json limits = state.value("limits", json::object());
    spec.disk = limits.value("disk", uint64_t(0));
    spec.tmp_size = limits.value("tmp", kDefaultTmpSize);
    spec.cpu_class = cpu_class_of(state);
    spec.binds = binds_from_record(state.value("binds", json::array()));
    spec.bind_forbidden = {paths.root, paths.run};
    return spec;
}

Result<Standby> start_next_init(const Paths& paths, const State& state, const cgroup::Cgroup& cg) {
    auto rootfs = state.rootfs();
    if (!rootfs) return fail(rootfs.error());
    auto spec = start_spec_of(paths, state);
    if (!spec) return fail(spec.error());
    auto policy = policy_of_state(state.extra);
    if (!policy) return fail(policy.error());
    auto dir = new_upper_dir(paths, state.id);
    if (!dir) return fail(dir.error());
    // With --disk the init's upper is a tmpfs of its own; the directories stay empty.
    rootfs->upper = *dir + "/upper";
    rootfs->work = *dir + "/work";
    // Not the running init's socket: the standby serves once a reset swaps it in.
    spec->exec_socket = standby_exec_socket(rootfs->upper);
    auto init = start(paths, *rootfs, *spec, cg);
    if (!init) {
        (void)fs::remove_tree(*dir);
        (void)::unlink((paths.state_dir(state.id) + "/" + spec->exec_socket).c_str());
        return fail(init.error());
    }
    Standby s{init->pid, proc::process_start(init->pid), rootfs->upper, rootfs->work};
    // The policy's mounts, before anything can run in its namespaces.
    if (*policy && !(*policy)->files.empty())
        if (auto r = guard::apply_file_rules(s.pid, s.pid_start, (*policy)->files, paths.run); !r) {
            ::kill(s.pid, SIGKILL);
            (void)fs::remove_tree(*dir);
            return fail(std::move(r.error()).context("applying the policy"));
        }
    return s;
}

Result<Standby> make_standby(const Paths& paths, const State& state, const cgroup::Cgroup& cg) {
    auto s = start_next_init(paths, state, cg);
    if (!s) return fail(s.error());
    // Stopped: nothing in it runs, not even its init's reaping loop, until a reset.
    if (::kill(s->pid, SIGSTOP) < 0) {
        Error e = sys_error("kill SIGSTOP", std::to_string(s->pid));
        ::kill(s->pid, SIGKILL);
        (void)fs::remove_tree(fs::dirname(s->upper));
        return fail(std::move(e));
    }
    return s;
}

namespace {
// The pid of `pid` in each pid namespace from ours down to its own (NSpid), or none.
std::vector<std::string> ns_pids(const std::string& pid) {
    std::vector<std::string> ids;
    auto status = fs::read_file("/proc/" + pid + "/status");
    if (!status) return ids;
    auto field = proc::status_field(*status, "NSpid");
    if (!field) return ids;
    std::istringstream line{std::string(*field)};
    for (std::string v; line >> v;) ids.push_back(v);
    return ids;
}
}  // namespace

std::string standby_exec_socket(const std::string& upper) { return basename_of(fs::dirname(upper)) + ".exec.sock"; }

bool is_namespace_init(int pid) {
    // One level below ours exactly: an agent's own pid namespace inside a sandbox is
    // two levels down, and its pid 1 is none of our business.
    auto ids = ns_pids(std::to_string(pid));
    return ids.size() >= 2 && ids.size() == ns_pids("self").size() + 1 && ids.back() == "1";
}

std::vector<std::string> upper_leftovers(const std::string& upper, const std::string& work) {
    std::string dir = fs::dirname(upper);
    if (basename_of(dir).starts_with(kStandbyPrefix)) return {dir};
    return {upper, work, dir + "/reset-old"};
}

Result<json> sweep_standbys(const Paths& paths, const State& state, const cgroup::Cgroup& cg, bool dry_run) {
    json found = json::array();
    Status first;
    auto keep = [&](Status r) {
        if (!r && first) first = std::move(r);
    };
    int init = state.pid;
    const Standby& standby = state.standby;
    for (int pid : cg.pids()) {
        if (pid == init || pid == standby.pid || !is_namespace_init(pid)) continue;
        found.push_back({{"kind", "orphan_standby"}, {"path", std::to_string(pid)}});
        if (!dry_run) keep(kill_pid(pid, proc::process_start(pid)));
    }
    // The uppers the state names; anything else of ours in the data directory is left
    // over from an init that is gone or going.
    std::string upper = state.upper();
    if (upper.empty()) return found;
    std::string current = fs::dirname(upper);
    const std::string& id = state.id;
    auto names = fs::list_dir(paths.data_dir(id));
    if (!names) return fail(names.error());
    std::vector<std::string> gone;
    for (auto& name : *names) {
        std::string path = paths.data_dir(id) + "/" + name;
        if (name.starts_with(kStandbyPrefix) && path != current &&
            (standby.upper.empty() || path != fs::dirname(standby.upper)))
            gone.push_back(path);
    }
    // The rootfs's first upper (made by dsec-mount), once a reset moved on from it.
    std::string rootfs_id = state.rootfs_id();
    if (!rootfs_id.empty() && check_id(rootfs_id)) {
        std::string first_dir = paths.data_dir(rootfs_id);
        if (current != first_dir)
            for (auto& path : upper_leftovers(first_dir + "/upper", first_dir + "/work"))
                if (fs::exists(path)) gone.push_back(path);
    }
    for (auto& path : gone) {
        found.push_back({{"kind", "orphan_upper"}, {"path", path}});
        if (!dry_run) keep(fs::remove_tree(path));
    }
    auto sockets = fs::list_dir(paths.state_dir(id));
    if (!sockets) return fail(sockets.error());
    std::string live = standby.upper.empty() ? "" : standby_exec_socket(standby.upper);
    for (auto& name : *sockets) {
        if (!name.starts_with(kStandbyPrefix) || !name.ends_with(".exec.sock") || name == live) continue;
        std::string path = paths.state_dir(id) + "/" + name;
        found.push_back({{"kind", "orphan_socket"}, {"path", path}});
        if (!dry_run && ::unlink(path.c_str()) < 0 && errno != ENOENT) keep(fail(sys_error("unlink", path)));
    }
    if (!first) return fail(first.error());
    return found;
}

}  // namespace dsec::sandbox
