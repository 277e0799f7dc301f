// Where a sandbox's cgroups go with its own or a shared memory cgroup, on hybrid, v1 and
// v2 layouts (parsed from mountinfo text), and what create makes in a fake v2 tree.
#include <unistd.h>

#include <doctest/doctest.h>

#include "dsec/cgroup/cgroup.h"
#include "dsec/sandbox/open.h"
#include "dsec/sys/fs.h"

using namespace dsec;

namespace {
const char* kHybrid =
    "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 30 0:33 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

cgroup::Layout layout_of(const char* mountinfo) {
    auto l = cgroup::parse_mountinfo(mountinfo);
    REQUIRE(l);
    return *l;
}

cgroup::Layout fake_v2(const std::string& root) {
    cgroup::Layout l;
    l.mode = cgroup::Mode::v2;
    l.unified = root;
    return l;
}
}  // namespace

TEST_CASE("placement: own is <parent>/<id> everywhere, as before") {
    auto p = cgroup::place(layout_of(kHybrid), "dsec", "a", cgroup::Memcg::own);
    REQUIRE(p);
    CHECK(p->dirs.size() == 6);
    CHECK(p->memory == "/sys/fs/cgroup/memory/dsec/a");
    CHECK(p->shared.empty());
    CHECK(p->join == p->dirs);
    // The same as a Cgroup made without a mode (states written before --memcg).
    CHECK(cgroup::Cgroup(layout_of(kHybrid), "dsec", "a").dirs() == p->dirs);
}

TEST_CASE("placement: shared on a hybrid host moves only the memory group") {
    auto p = cgroup::place(layout_of(kHybrid), "dsec", "a", cgroup::Memcg::shared);
    REQUIRE(p);
    CHECK(p->shared == "/sys/fs/cgroup/memory/dsec/.shared-memory");
    CHECK(p->memory == p->shared);
    CHECK(p->dirs == std::vector<std::string>{"/sys/fs/cgroup/cpu/dsec/a", "/sys/fs/cgroup/cpuacct/dsec/a",
                                              "/sys/fs/cgroup/freezer/dsec/a", "/sys/fs/cgroup/pids/dsec/a",
                                              "/sys/fs/cgroup/unified/dsec/a"});
    CHECK(p->unified == "/sys/fs/cgroup/unified/dsec/a");
    // Joined too, though not the sandbox's to remove.
    CHECK(p->join.size() == 6);
    CHECK(p->join.back() == p->shared);
    cgroup::Cgroup cg(layout_of(kHybrid), "dsec", "a", cgroup::Memcg::shared);
    // v1 groups are joined through `tasks` (no global lock); the unified tree's at the clone.
    CHECK(cg.v1_join_files().size() == 5);
    CHECK(cg.v1_join_files().back() == "/sys/fs/cgroup/memory/dsec/.shared-memory/tasks");
    CHECK(cg.v1_join_files().front() == "/sys/fs/cgroup/cpu/dsec/a/tasks");
    CHECK(cg.memcg() == cgroup::Memcg::shared);
}

TEST_CASE("placement: shared on v2 nests the sandbox in the shared group") {
    auto p = cgroup::place(fake_v2("/cg"), "dsec", "a", cgroup::Memcg::shared);
    REQUIRE(p);
    CHECK(p->shared == "/cg/dsec/.shared-memory");
    CHECK(p->unified == "/cg/dsec/.shared-memory/a");
    CHECK(p->dirs == std::vector<std::string>{"/cg/dsec/.shared-memory/a"});
    CHECK(p->join == p->dirs);  // the shared group is its parent: no second join
    CHECK(p->memory == p->shared);
    auto own = cgroup::place(fake_v2("/cg"), "dsec", "a", cgroup::Memcg::own);
    REQUIRE(own);
    CHECK(own->memory == "/cg/dsec/a");
}

TEST_CASE("placement: shared needs the v1 memory controller in a hierarchy of its own") {
    auto together = layout_of("31 30 0:28 / /sys/fs/cgroup/cm rw - cgroup cgroup rw,cpu,memory\n");
    auto p = cgroup::place(together, "dsec", "a", cgroup::Memcg::shared);
    REQUIRE_FALSE(p);
    CHECK(p.error().code == Code::unsupported);
    // The Cgroup falls back to the own placement (so destroy and gc find it) and create refuses.
    cgroup::Cgroup cg(together, "dsec", "a", cgroup::Memcg::shared);
    CHECK(cg.dirs() == std::vector<std::string>{"/sys/fs/cgroup/cm/dsec/a"});
    auto made = cg.create({});
    REQUIRE_FALSE(made);
    CHECK(made.error().code == Code::unsupported);
}

TEST_CASE("placement: the mode's names") {
    CHECK(cgroup::parse_memcg("own").value() == cgroup::Memcg::own);
    CHECK(cgroup::parse_memcg("shared").value() == cgroup::Memcg::shared);
    auto bad = cgroup::parse_memcg("mine");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == Code::usage);
    CHECK(std::string(cgroup::memcg_name(cgroup::Memcg::shared)) == "shared");
}

TEST_CASE("placement: create on a fake v2 tree makes the shared group without memory for its children") {
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-memcg.");
    REQUIRE(tmp);
    cgroup::Cgroup cg(fake_v2(tmp->path()), "p", "sb", cgroup::Memcg::shared);
    // A memory limit needs a memory cgroup of its own.
    cgroup::Limits limits;
    limits.memory = 1 << 20;
    auto refused = cg.create(limits);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == Code::usage);

    // The kernel makes the control files; a plain directory takes the writes as new files.
    REQUIRE(fs::mkdir_p(tmp->path() + "/p/.shared-memory"));
    REQUIRE(fs::atomic_write(tmp->path() + "/p/.shared-memory/cgroup.subtree_control", ""));
    REQUIRE(cg.create({}));
    CHECK(fs::exists(tmp->path() + "/p/.shared-memory/sb"));
    CHECK(*fs::read_file(tmp->path() + "/p/.shared-memory/cgroup.subtree_control") == "+pids");  // last write wins here
    CHECK(cg.unified_dir() == tmp->path() + "/p/.shared-memory/sb");
}

TEST_CASE("placement: a hybrid host whose unified tree freezes and counts CPU makes no cpuacct or freezer group") {
    auto layout = layout_of(kHybrid);
    layout.unified_core = true;
    CHECK_FALSE(layout.on_v1("freezer"));
    CHECK_FALSE(layout.on_v1("cpuacct"));
    CHECK(layout.on_v1("cpu"));
    auto own = cgroup::place(layout, "dsec", "a", cgroup::Memcg::own);
    REQUIRE(own);
    CHECK(own->dirs == std::vector<std::string>{"/sys/fs/cgroup/cpu/dsec/a", "/sys/fs/cgroup/memory/dsec/a",
                                                "/sys/fs/cgroup/pids/dsec/a", "/sys/fs/cgroup/unified/dsec/a"});
    // What an older dsec made there is still removed and collected.
    CHECK(own->unused == std::vector<std::string>{"/sys/fs/cgroup/cpuacct/dsec/a", "/sys/fs/cgroup/freezer/dsec/a"});
    auto shared = cgroup::place(layout, "dsec", "a", cgroup::Memcg::shared);
    REQUIRE(shared);
    CHECK(shared->dirs.size() == 3);
    CHECK(shared->join.size() == 4);
    CHECK(shared->unused.size() == 2);

    // cpu and cpuacct in one hierarchy: the group is made for cpu, nothing is unused.
    auto together = layout_of("31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
                              "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
    together.unified_core = true;
    auto p = cgroup::place(together, "dsec", "a", cgroup::Memcg::own);
    REQUIRE(p);
    CHECK(p->dirs == std::vector<std::string>{"/sys/fs/cgroup/cpu,cpuacct/dsec/a", "/sys/fs/cgroup/unified/dsec/a"});
    CHECK(p->unused.empty());
}

TEST_CASE("placement: kernel releases") {
    CHECK(cgroup::kernel_at_least("5.14.0", 5, 14));
    CHECK(cgroup::kernel_at_least("6.1.0-13-amd64", 5, 14));
    CHECK(cgroup::kernel_at_least("6.18.44-fc-v1147", 5, 14));
    CHECK_FALSE(cgroup::kernel_at_least("5.10.0-28-amd64", 5, 14));
    CHECK_FALSE(cgroup::kernel_at_least("4.19.0", 5, 14));
    CHECK_FALSE(cgroup::kernel_at_least("", 5, 14));
}

TEST_CASE("placement: a sandbox an older dsec made in the freezer and cpuacct hierarchies is still its own") {
    auto layout = layout_of(kHybrid);
    layout.unified_core = true;
    cgroup::Cgroup cg(layout, "dsec", "a");
    auto old_layout = layout_of(kHybrid);
    sandbox::SavedCgroup before{"hybrid", cgroup::Cgroup(old_layout, "dsec", "a").dirs()};
    CHECK(before.dirs.size() == 6);
    CHECK(sandbox::same_cgroup(before, cg));
    CHECK(sandbox::same_cgroup(sandbox::SavedCgroup{"hybrid", cg.dirs()}, cg));
    // Another sandbox's groups are not.
    CHECK_FALSE(sandbox::same_cgroup(sandbox::SavedCgroup{"hybrid", cgroup::Cgroup(layout, "dsec", "b").dirs()}, cg));
}

TEST_CASE("placement: a sandbox's groups saved under another name of the same hierarchy are its own") {
    // A hierarchy mounted twice: the state names one mount, the layout found now the other.
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-same.");
    REQUIRE(tmp);
    std::string root = tmp->path();
    REQUIRE(fs::mkdir_p(root + "/unified/dsec/a", 0755));
    REQUIRE(fs::mkdir_p(root + "/unified/dsec/b", 0755));
    REQUIRE(::symlink((root + "/unified").c_str(), (root + "/elsewhere").c_str()) == 0);
    cgroup::Layout layout;
    layout.mode = cgroup::Mode::v2;
    layout.unified = root + "/unified";
    cgroup::Cgroup cg(layout, "dsec", "a");
    REQUIRE(cg.dirs() == std::vector<std::string>{root + "/unified/dsec/a"});
    CHECK(sandbox::same_cgroup(sandbox::SavedCgroup{"v2", {root + "/elsewhere/dsec/a"}}, cg));
    CHECK_FALSE(sandbox::same_cgroup(sandbox::SavedCgroup{"v2", {root + "/elsewhere/dsec/b"}}, cg));
    CHECK_FALSE(sandbox::same_cgroup(sandbox::SavedCgroup{"v2", {root + "/elsewhere/dsec/gone"}}, cg));
    CHECK_FALSE(sandbox::same_cgroup(sandbox::SavedCgroup{"v2", {}}, cg));
}
