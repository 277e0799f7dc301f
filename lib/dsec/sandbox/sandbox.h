// The sandbox lifecycle: create, destroy, and the options they take.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/cgroup/cgroup.h"
#include "dsec/guard/policy.h"
#include "dsec/mount/rootfs.h"
#include "dsec/sandbox/bind.h"
#include "dsec/sandbox/cpu_class.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/security.h"
#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// Default tasks a sandbox may hold (--pids): a fork bomb stops here.
constexpr uint64_t kDefaultPids = 4096;
/// Default size of the scratch tmpfs (--tmp-size).
constexpr uint64_t kDefaultTmpSize = uint64_t(256) << 20;

/// What `dsec-run create` was asked for, beyond the rootfs.
struct CreateOptions {
    std::string id;                     // empty: the rootfs's id, else a random one
    std::string hostname;               // empty: the id
    cgroup::Limits limits;
    cgroup::Memcg memcg = cgroup::Memcg::own;  // --memcg: own memory cgroup or the run directory's shared one
    uint64_t disk = 0;                  // bytes the upper may hold (0: no cap)
    std::vector<std::string> env;       // K=V, on top of the image's env
    std::string workdir;                // empty: the image's, else "/"
    std::string user;                   // "UID[:GID]"; empty: the image's numeric user, else 0
    std::string network = "none";       // only "none": loopback, up
    uint64_t ttl_ms = 0;
    uint64_t idle_ttl_ms = 0;
    std::map<std::string, std::string> labels;
    std::string policy;                 // path of a dsec-guard policy (sandbox/policy.h)
    std::shared_ptr<const guard::Policy> guard;  // that policy, parsed; applied at create
    std::string init_program;           // path of dsec-init
    Security security;                  // user namespace, capabilities, limits, seccomp
    uint64_t tmp_size = kDefaultTmpSize;  // bytes of the tmpfs behind /tmp, /dev/shm, /dev
    CpuClass cpu_class = CpuClass::latency;
    std::vector<Bind> binds;            // --bind (bind.h)
    std::string layer_store;            // the store's directory, which no bind may reach
    bool init_in_process = false;       // a one-shot sandbox: its init is a copy of this process,
                                        // not dsec-init (ns/init.h), where that is possible
    // Called with the state as saved so far ("creating") once the init has been started,
    // while it sets itself up: what it sends to the init's exec socket is served the
    // moment the init is ready (dsec-run run, exec.h send_ahead). Not called with a
    // policy, whose file rules go in after the init is ready and before anything runs.
    std::function<void(const State&)> while_starting;
};

/// Creates one sandbox from a mounted rootfs and returns its state record. The state is
/// written as "creating" before any work, so a crash leaves something destroy() can
/// finish; on error everything made so far is removed again.
/// Errors: exists, not_mounted (a layer), the failing cgroup/mount/clone step.
Result<json> create(const Paths& paths, const mount::Rootfs& rootfs, const CreateOptions& options);

/// How destroy() treats an id it does not know.
enum class Missing { error, ok };

/// What is left of a destroyed sandbox once nothing of it runs: its mount namespace (the
/// overlay's unmount waits on RCU grace periods), its network namespace (whose cleanup
/// walks every other one on the host) and its upper and work directories, to remove once
/// the overlay has gone. What one still holds when it is dropped (an error on the way,
/// or replaced by another) is finished then, so nothing is left for gc.
struct Remains {
    Fd mnt, net;
    std::vector<std::string> trees;
    Remains() = default;
    Remains(Remains&& other) noexcept
        : mnt(std::move(other.mnt)), net(std::move(other.net)), trees(std::exchange(other.trees, {})) {}
    Remains& operator=(Remains&& other) noexcept {
        if (this == &other) return *this;
        (void)finish();
        mnt = std::move(other.mnt);
        net = std::move(other.net);
        trees = std::exchange(other.trees, {});
        return *this;
    }
    ~Remains() { (void)finish(); }
    explicit operator bool() const { return bool(mnt) || bool(net) || !trees.empty(); }
    /// Lets the namespaces go, then removes the trees. Errors: the first removal's.
    Status finish();
};

/// Kills everything in the sandbox, removes its cgroups, upper/work and state. Copes with
/// half-made sandboxes (no init, partial cgroups, missing upper, partial state).
/// Returns the record {"type":"sandbox","id","state":"destroyed"|"absent"}.
/// Errors: not_found (unknown id, Missing::error), busy (processes that do not die).
/// With `keep_log_dir`, the command log is copied to <dir>/<id>.log.jsonl once nothing
/// runs in the sandbox any more, before anything is removed (log.h).
/// With `remains`, what is left (see Remains) is handed over there instead of being let
/// go before destroy returns, the trees renamed aside within their directory, so that the
/// id is free at once: a caller about to exit leaves them to a child of its own. What a
/// crash leaves of them, dsec-reclaim gc removes.
Result<json> destroy(const Paths& paths, const std::string& id, Missing missing, const std::string& keep_log_dir = "",
                     Remains* remains = nullptr);

/// Finds dsec-init beside the running executable or in ../libexec/dsec.
/// Errors: not_found naming where it looked.
Result<std::string> find_init();

/// The copy of dsec-init that sandboxes execute: `<run>/init/dsec-init`, on a small tmpfs
/// of its own mounted there once per run directory (renewed when `program` changes), so
/// that the init's executable is "/dsec-init" on a mount outside its root, not a host path
/// (opened by the init's child in its own copy of the host's mounts when it pivots, by
/// dsec-run when the init starts from the template, ns/root_template.h). Costs two stat
/// calls once staged.
/// Errors: the failing stat/mount/copy.
Result<std::string> stage_init(const std::string& run_dir, const std::string& program);

}  // namespace dsec::sandbox
