// Starting a sandbox's init: clone3 into a new user namespace (mapped onto the sandbox's
// host id range) and new mount, pid, net, ipc and uts namespaces, straight into its
// cgroups; then the host hands it idmapped clones of its layers and of its upper.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dsec/ns/confine.h"
#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::ns {

/// The namespaces every sandbox gets besides the user namespace (the cgroup namespace is
/// entered after the init has joined its cgroups, so that its root is its own cgroup; the
/// network namespace is made by the init while it sets up).
int sandbox_namespaces();

/// The descriptors dsec-init finds at start (init.c): the upper's and the layers'
/// slots hold /dev/null until their mounts come over the channel.
enum InitFd { kInitStatusFd = 3, kInitChannelFd = 4, kInitUpperFd = 5, kInitFirstLowerFd = 6 };

/// The sandbox's upper, made while the init sets itself up (InitSpec::upper).
struct InitUpper {
    std::string dir;  // the directory holding upper/ and work/ ...
    Fd mount;         // ... or a detached mount holding them (--disk)
};

/// What the init needs only at the end of its setup, made meanwhile (InitSpec::late).
struct InitLate {
    std::vector<Fd> join;                            // v1 join files the init writes "0" into
    std::unique_ptr<dsec_confinement> confinement;   // what the init applies once ready
};

struct InitSpec {
    std::string exe_path;             // dsec-init, opened by the child in its own mount namespace
    int root_template = -1;           // the run directory's template mount namespace (root_template.h): the
                                      // init's is copied from it and it starts in kTemplateStartDir; -1: from
                                      // the host's, starting in root_dir
    std::vector<std::string> argv;    // argv[0] included; never a host path
    std::string root_dir;             // an empty host directory: the init's cwd at start
    std::vector<std::string> lowers;  // mounted layers, top first
    bool userns = true;               // false: --userns=host
    uint32_t host_uid = 0;            // the first host id of the sandbox's range (userns only) ...
    uint32_t id_count = 0;            // ... and its length; mapped by sandbox_id_map (idrange.h)
    int unified_cgroup_fd = -1;       // a cgroup2 directory: CLONE_INTO_CGROUP
    std::vector<int> join_fds;        // v1 join files the child writes "0" into first (the memory
                                      // cgroup's: Cgroup::Part::early)
    // Called once the child has its ids, while it sets itself up, in this order: the upper
    // (sent with the layers, which the init needs first), then the rest. Both required.
    std::function<Result<InitUpper>()> upper;
    std::function<Result<InitLate>()> late;
    std::vector<int> binds;           // detached mounts, in the init's start directory as b0.. (bind_stage.h)
    int exec_listen = -1;             // a listening socket the init serves execs on (confine.h), after the layers
    bool in_process = false;          // run the init's code in the child, no execve of exe_path (init.h);
                                      // only where init_in_process_possible()
    std::function<void()> while_starting;  // called after `late`, while the child sets itself up
                                           // (start_init waits for its report after)
};

/// Remembers the program's argument strings (main's argc and argv), which the init of a
/// one-shot sandbox, a copy of this process, overwrites with "dsec-init": /proc/1/cmdline
/// is readable by every process inside, and a command line may hold host paths.
void remember_command_line(int argc, char** argv);
/// Whether an init may run in a copy of this process (InitSpec::in_process): once the
/// command line is known. (The init's code takes no lock, no malloc and no stdio stream
/// but snprintf's own, so other threads of ours holding one at the copy do not matter.)
bool init_in_process_possible();

/// A running init: host pid and a pidfd for it.
struct Started {
    int pid = 0;
    Fd pidfd;
};

/// Clones the init, maps its ids and lets it start setting itself up; then hands it its
/// mounts (the upper made by `upper`) and what `late` makes, and waits until it reports
/// ready (or fails). Safe to call from several threads at once: the child only makes raw
/// syscalls before execve (or, in process, before the init's code, which takes no lock). Errors: the failing step inside the init (op, path, errno),
/// the failing clone/map/idmap step on the host.
Result<Started> start_init(const InitSpec& spec);

}  // namespace dsec::ns
