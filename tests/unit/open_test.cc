// sandbox::open_sandbox: the one way into a sandbox refuses what it cannot work on.
#include <doctest/doctest.h>

#include "dsec/sandbox/open.h"
#include "dsec/sys/fs.h"

using namespace dsec;
using sandbox::Lifecycle;
using sandbox::Need;

namespace {
struct TempRun {
    std::string dir;
    TempRun() {
        char tmpl[] = "/tmp/dsec-unit-open.XXXXXX";
        REQUIRE(::mkdtemp(tmpl));
        dir = tmpl;
    }
    ~TempRun() { (void)fs::remove_tree(dir); }
};

void put(const sandbox::Paths& paths, const sandbox::State& s) {
    REQUIRE(fs::mkdir_p(paths.state_dir(s.id), 0700));
    REQUIRE(sandbox::save(paths, s));
}
}  // namespace

TEST_CASE("open_sandbox: bad ids, unknown sandboxes and the wrong lifecycle are refused") {
    TempRun t;
    dsec::Paths p{.root = t.dir + "/root", .run = t.dir, .store = ""};
    sandbox::Paths paths(p);

    auto bad = sandbox::open_sandbox(paths, "../x", Need::any);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == Code::bad_input);

    auto unknown = sandbox::open_sandbox(paths, "nobody", Need::any);
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().code == Code::not_found);

    put(paths, sandbox::State{.id = "young", .lifecycle = Lifecycle::creating});
    auto creating = sandbox::open_sandbox(paths, "young", Need::running);
    REQUIRE_FALSE(creating);
    CHECK(creating.error().code == Code::not_running);
    CHECK(creating.error().message.find("state creating") != std::string::npos);

    // Running on paper, but no init: fine for Need::running (the join finds out), not
    // for Need::running_init.
    put(paths, sandbox::State{.id = "ghost", .lifecycle = Lifecycle::running, .pid = 0});
    auto ghost = sandbox::open_sandbox(paths, "ghost", Need::running_init);
    REQUIRE_FALSE(ghost);
    CHECK(ghost.error().code == Code::not_running);

    REQUIRE(fs::mkdir_p(paths.state_dir("torn"), 0700));
    REQUIRE(fs::atomic_write(paths.state_file("torn"), "{\"id\":"));
    auto torn = sandbox::open_sandbox(paths, "torn", Need::any);
    REQUIRE_FALSE(torn);
    CHECK(torn.error().code == Code::bad_input);
}

TEST_CASE("open_sandbox: the cgroup saved at create must be the one this host gives the sandbox") {
    TempRun t;
    dsec::Paths p{.root = t.dir + "/root", .run = t.dir, .store = ""};
    sandbox::Paths paths(p);
    auto here = sandbox::cgroup_of(paths, "box");
    if (!here) return;  // no cgroup filesystem mounted: nothing to compare with

    sandbox::State same{.id = "box", .lifecycle = Lifecycle::running, .pid = 1};
    same.cgroup = sandbox::SavedCgroup{"v2", here->dirs()};
    put(paths, same);
    auto opened = sandbox::open_sandbox(paths, "box", Need::running);
    REQUIRE(opened);
    CHECK(opened->cg.dirs() == here->dirs());
    auto join = opened->join(0, true);
    CHECK(join.init_pid == 1);
    CHECK(join.cgroup_join == here->v1_join_files());
    CHECK(join.cgroup_unified == here->unified_dir());

    sandbox::State moved = same;
    moved.cgroup->dirs = {"/sys/fs/cgroup/elsewhere/box"};
    put(paths, moved);
    auto refused = sandbox::open_sandbox(paths, "box", Need::any);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == Code::corrupt);
}
