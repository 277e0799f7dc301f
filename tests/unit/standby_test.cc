#include <doctest/doctest.h>
#include <unistd.h>

#include "dsec/cgroup/cgroup.h"
#include "dsec/sandbox/standby.h"
#include "dsec/sys/fs.h"

using namespace dsec;
using nlohmann::json;

TEST_CASE("standby record: round trip; missing or malformed is none") {
    sandbox::Standby s{42, 1234, "/r/sandboxes/a/standby-1/upper", "/r/sandboxes/a/standby-1/work"};
    auto back = sandbox::Standby::of(json{{"standby", s.to_record()}});
    CHECK(back.pid == 42);
    CHECK(back.pid_start == 1234);
    CHECK(back.upper == s.upper);
    CHECK(back.work == s.work);
    CHECK(sandbox::Standby::of(json::object()).pid == 0);
    CHECK(sandbox::Standby::of(json{{"standby", "x"}}).pid == 0);
    CHECK(sandbox::Standby::of(json{{"standby", {{"pid", 42}}}}).pid == 0);  // no upper: unusable
    CHECK(!sandbox::Standby::of(json::object()).alive());
    // A pid that runs, with another start time, is not the standby.
    CHECK(!sandbox::Standby{int(::getpid()), 1, "u", "w"}.alive());
}

TEST_CASE("upper leftovers: a standby's directory whole, the rootfs's first upper and work") {
    CHECK(sandbox::upper_leftovers("/r/sandboxes/a/standby-7/upper", "/r/sandboxes/a/standby-7/work") ==
          std::vector<std::string>{"/r/sandboxes/a/standby-7"});
    CHECK(sandbox::upper_leftovers("/r/sandboxes/a/upper", "/r/sandboxes/a/work") ==
          std::vector<std::string>{"/r/sandboxes/a/upper", "/r/sandboxes/a/work", "/r/sandboxes/a/reset-old"});
}

TEST_CASE("namespace init: neither we nor pid 1 of our namespace") {
    CHECK(!sandbox::is_namespace_init(int(::getpid())));
    CHECK(!sandbox::is_namespace_init(1));
    CHECK(!sandbox::is_namespace_init(0));
}

TEST_CASE("sweep: uppers named by neither the rootfs nor the standby go; dry run keeps them") {
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-standby.");
    REQUIRE(tmp);
    dsec::Paths p{tmp->path() + "/root", tmp->path() + "/run", ""};
    sandbox::Paths paths(p);
    std::string data = paths.data_dir("box");
    for (auto d : {"/standby-1/upper", "/standby-2/upper", "/standby-3/upper", "/upper", "/work"})
        REQUIRE(fs::mkdir_p(data + d));
    // A cgroup whose only process is this test (not an init).
    cgroup::Layout layout;
    layout.unified = tmp->path() + "/cg";
    cgroup::Cgroup cg(layout, "parent", "box");
    REQUIRE(fs::mkdir_p(cg.unified_dir()));
    REQUIRE(fs::atomic_write(cg.unified_dir() + "/cgroup.procs", std::to_string(::getpid()) + "\n"));
    json state = {{"id", "box"},
                  {"pid", 1},
                  {"rootfs", {{"id", "box"}, {"upper", data + "/standby-2/upper"}, {"work", data + "/standby-2/work"}}},
                  {"standby", {{"pid", 5}, {"upper", data + "/standby-3/upper"}, {"work", data + "/standby-3/work"}}}};
    auto dry = sandbox::sweep_standbys(paths, state, cg, true);
    REQUIRE(dry);
    CHECK(dry->size() == 3);
    CHECK(fs::exists(data + "/standby-1"));
    auto found = sandbox::sweep_standbys(paths, state, cg);
    REQUIRE(found);
    CHECK(*found == *dry);
    for (auto& item : *found) CHECK(item["kind"] == "orphan_upper");
    CHECK(!fs::exists(data + "/standby-1"));
    CHECK(!fs::exists(data + "/upper"));
    CHECK(!fs::exists(data + "/work"));
    CHECK(fs::exists(data + "/standby-2/upper"));
    CHECK(fs::exists(data + "/standby-3/upper"));
    // Before any reset the rootfs's first upper is the current one.
    state["rootfs"]["upper"] = data + "/upper";
    REQUIRE(fs::mkdir_p(data + "/upper"));
    auto first = sandbox::sweep_standbys(paths, state, cg, true);
    REQUIRE(first);
    CHECK(first->size() == 1);  // standby-2, no longer named
}
