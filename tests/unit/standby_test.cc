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
    auto read = sandbox::State::from_record(
        json{{"id", "box"},
             {"state", "running"},
             {"pid", 1},
             {"rootfs", {{"id", "box"}, {"upper", data + "/standby-2/upper"}, {"work", data + "/standby-2/work"}}},
             {"standby", {{"pid", 5}, {"upper", data + "/standby-3/upper"}, {"work", data + "/standby-3/work"}}}});
    REQUIRE(read);
    sandbox::State& state = *read;
    CHECK(state.standby.pid == 5);
    CHECK(state.upper() == data + "/standby-2/upper");
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
    state.set_upper(data + "/upper", data + "/work");
    REQUIRE(fs::mkdir_p(data + "/upper"));
    auto first = sandbox::sweep_standbys(paths, state, cg, true);
    REQUIRE(first);
    CHECK(first->size() == 1);  // standby-2, no longer named
}

TEST_CASE("a state's standby, resets and upper are typed fields, written back as the record's") {
    auto read = sandbox::State::from_record(json{{"id", "box"},
                                                 {"state", "running"},
                                                 {"pid", 7},
                                                 {"resets", 2},
                                                 {"reset", "2026-01-01T00:00:00Z"},
                                                 {"rootfs", {{"id", "box"}, {"upper", "/u1"}, {"work", "/w1"}, {"layers", json::array()}}},
                                                 {"standby", {{"pid", 9}, {"pid_start", 99}, {"upper", "/u2"}, {"work", "/w2"}}},
                                                 {"labels", {{"team", "a"}}}});
    REQUIRE(read);
    sandbox::State st = *read;
    CHECK(st.resets == 2);
    CHECK(st.reset_at == "2026-01-01T00:00:00Z");
    CHECK(st.standby.pid == 9);
    CHECK(st.standby.pid_start == 99);
    CHECK(st.upper() == "/u1");
    CHECK(st.work() == "/w1");
    CHECK_FALSE(st.extra.contains("standby"));
    CHECK_FALSE(st.extra.contains("resets"));
    // A reset's swap: the standby's upper becomes the rootfs's, the standby goes.
    st.set_upper(st.standby.upper, st.standby.work);
    st.standby = {};
    st.resets++;
    json out = st.to_record();
    CHECK(out["rootfs"]["upper"] == "/u2");
    CHECK(out["rootfs"]["work"] == "/w2");
    CHECK(out["rootfs"]["id"] == "box");
    CHECK(out["resets"] == 3);
    CHECK(out["reset"] == "2026-01-01T00:00:00Z");
    CHECK_FALSE(out.contains("standby"));
    CHECK(out["labels"]["team"] == "a");  // what reset does not know is kept
    // A state never reset carries neither field.
    auto fresh = sandbox::State::from_record(json{{"id", "b"}, {"state", "running"}});
    REQUIRE(fresh);
    CHECK_FALSE(fresh->to_record().contains("resets"));
    CHECK_FALSE(fresh->to_record().contains("reset"));
    CHECK(fresh->upper().empty());
}
