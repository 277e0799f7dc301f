#include "dsec/cgroup/placement.h"

#include <set>

namespace dsec::cgroup {

const char* memcg_name(Memcg m) { return m == Memcg::shared ? "shared" : "own"; }

Result<Memcg> parse_memcg(std::string_view name) {
    if (name == "own") return Memcg::own;
    if (name == "shared") return Memcg::shared;
    return fail(make_error(Code::usage, "--memcg takes own or shared, got \"" + std::string(name) + "\""));
}

Result<Placement> place(const Layout& layout, const std::string& parent, const std::string& id, Memcg memcg) {
    Placement p;
    const std::string shared_name(kSharedMemoryGroup);
    bool shared = memcg == Memcg::shared;
    std::string memory_mount = layout.on_v1("memory") ? layout.v1.at("memory") : "";
    if (shared && !memory_mount.empty()) {
        for (auto& [ctrl, mnt] : layout.v1)
            if (ctrl != "memory" && mnt == memory_mount)
                return fail(make_error(Code::unsupported,
                                       "--memcg shared needs the v1 memory controller in a hierarchy of its own (it "
                                       "shares one with " + ctrl + ")",
                                       memory_mount));
        p.shared = memory_mount + "/" + parent + "/" + shared_name;
    }
    // One directory per hierarchy, not per controller ("cpu,cpuacct" mounted together).
    std::set<std::string> seen;
    for (auto& [ctrl, mnt] : layout.v1) {
        if (!layout.on_v1(ctrl) || !seen.insert(mnt).second || (shared && mnt == memory_mount)) continue;
        p.dirs.push_back(mnt + "/" + parent + "/" + id);
    }
    for (auto& [ctrl, mnt] : layout.v1)
        if (seen.insert(mnt).second) p.unused.push_back(mnt + "/" + parent + "/" + id);
    if (!layout.unified.empty()) {
        // On v2 the shared group is the sandboxes' parent: its memory is theirs.
        bool nest = shared && memory_mount.empty();
        if (nest) p.shared = layout.unified + "/" + parent + "/" + shared_name;
        p.unified = nest ? p.shared + "/" + id : layout.unified + "/" + parent + "/" + id;
        p.dirs.push_back(p.unified);
    }
    if (!memory_mount.empty()) p.memory = shared ? p.shared : memory_mount + "/" + parent + "/" + id;
    else if (!layout.unified.empty()) p.memory = shared ? p.shared : p.unified;
    p.join = p.dirs;
    if (shared && !memory_mount.empty()) p.join.push_back(p.shared);
    return p;
}

}  // namespace dsec::cgroup
