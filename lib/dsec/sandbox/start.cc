#include "dsec/sandbox/start.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "dsec/ns/root_template.h"
#include "dsec/sandbox/disk.h"
#include "dsec/sandbox/sandbox.h"
#include "dsec/sandbox/served.h"

namespace dsec::sandbox {

namespace {
// The v1 join files of `part` of the cgroup, open for writing.
Result<std::vector<Fd>> open_join_files(const cgroup::Cgroup& cg, cgroup::Cgroup::Part part) {
    std::vector<Fd> fds;
    for (auto& file : cg.v1_join_files(part)) {
        Fd f(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
        if (!f) return fail(sys_error("open", file));
        fds.push_back(std::move(f));
    }
    return fds;
}

// What the init gets at the end of its setup: the rest of its cgroup (made now, when
// s.limits says so) and its confinement.
Result<ns::InitLate> make_late(const Paths& paths, const StartSpec& s, const cgroup::Cgroup& cg) {
    if (s.limits)
        if (auto r = cg.create(*s.limits, cgroup::Cgroup::Part::late); !r) return fail(r.error());
    auto join = open_join_files(cg, cgroup::Cgroup::Part::late);
    if (!join) return fail(join.error());
    // The init keeps the sandbox's capabilities permitted, not effective, once its mounts
    // are made: the commands it forks (exec served, served.h) get them back at their
    // execve as root of the sandbox, as commands joined from outside do.
    auto confinement = confinement_for(paths, s.id, s.security, -1, -1);
    if (!confinement) return fail(confinement.error());
    apply_cpu_class(s.cpu_class, **confinement);
    return ns::InitLate{std::move(*join), std::move(*confinement)};
}
}  // namespace

Result<ns::Started> start(const Paths& paths, const mount::Rootfs& rootfs, const StartSpec& s,
                          const cgroup::Cgroup& cg) {
    const Security& sec = s.security;
    std::string root = paths.root_mount(s.id);
    // Searchable by root of the sandbox, which starts in it; empty, and above it all is closed.
    if (::mkdir(root.c_str(), 0755) < 0 && errno != EEXIST) return fail(sys_error("mkdir", root));
    // A one-shot sandbox's init is a copy of us: nothing to stage or execute.
    bool in_process = s.init_in_process && ns::init_in_process_possible();
    std::string exe;
    if (!in_process) {
        auto staged = stage_init(paths.run, s.init_program);
        if (!staged) return fail(staged.error());
        exe = *staged;
    }

    Fd unified;
    if (!cg.unified_dir().empty()) {
        unified.reset(::open(cg.unified_dir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!unified) return fail(sys_error("open", cg.unified_dir()));
    }
    auto join = open_join_files(cg, cgroup::Cgroup::Part::early);
    if (!join) return fail(join.error());
    // Opened here, at each start, never kept from an earlier one (bind.h).
    if (!s.binds.empty() && !sec.userns)
        return fail(make_error(Code::usage, "--bind needs the sandbox's own user namespace (not --userns=host): "
                                        "nothing would lock a read-only bind"));
    if (s.binds.size() > kMaxBinds)
        return fail(make_error(Code::usage, "at most " + std::to_string(kMaxBinds) + " --bind per sandbox"));
    std::vector<Fd> binds;
    ns::InitSpec spec;
    for (auto& b : s.binds) {
        auto tree = open_bind_source(b, s.bind_forbidden);
        if (!tree) return fail(tree.error());
        spec.binds.push_back(tree->get());
        binds.push_back(std::move(*tree));
    }
    spec.exe_path = exe;
    spec.in_process = in_process;
    // With its own user namespace the init starts from the run directory's template mount
    // namespace and only chroots into its root (ns/root_template.h). A host that cannot
    // make the template (an odd kernel or mount table) gets the pivot_root start, which
    // works anywhere; so does --userns=host, whose init keeps CAP_SYS_CHROOT.
    Fd root_template;
    if (sec.userns)
        if (auto t = ns::root_template(paths.run)) root_template = std::move(*t);
    spec.root_template = root_template ? root_template.get() : -1;
    spec.argv = {"dsec-init", s.hostname, std::to_string(rootfs.lowerdirs.size()), std::to_string(s.tmp_size),
                 sec.userns ? "1" : "0", root_template ? "chroot" : "pivot"};
    for (auto& b : s.binds) spec.argv.push_back(b.dst);
    spec.root_dir = root;
    spec.lowers = rootfs.lowerdirs;
    spec.userns = sec.userns;
    spec.host_uid = s.ids.host_first;
    spec.id_count = ns::kIdsPerSandbox;
    spec.unified_cgroup_fd = unified ? unified.get() : -1;
    for (auto& f : *join) spec.join_fds.push_back(f.get());
    spec.upper = [&]() -> Result<ns::InitUpper> {
        auto upper = prepare_upper(rootfs, s.disk);
        if (!upper) return fail(upper.error());
        return ns::InitUpper{upper->dir, std::move(upper->tmpfs)};
    };
    spec.late = [&] { return make_late(paths, s, cg); };
    // Best effort: without it, exec joins from outside as for sandboxes made before.
    auto listener = listen_for_execs(paths.state_dir(s.id),
                                     s.exec_socket.empty() ? paths.exec_socket_name() : s.exec_socket);
    if (listener) spec.exec_listen = listener->get();
    spec.while_starting = s.while_starting;
    return ns::start_init(spec);
}

}  // namespace dsec::sandbox
