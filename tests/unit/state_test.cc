// The sandbox state file: its typed fields, its lifecycle names, and the fields a newer
// build wrote surviving a load and save by this one.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include "dsec/sys/process.h"
#include "dsec/sandbox/state.h"
#include "dsec/sys/fs.h"

using namespace dsec;
using nlohmann::json;
using sandbox::Lifecycle;

TEST_CASE("state: every lifecycle round-trips through its name; an unknown one is bad_input") {
    for (auto l : {Lifecycle::creating, Lifecycle::running, Lifecycle::paused, Lifecycle::destroying, Lifecycle::dead,
                   Lifecycle::broken}) {
        auto back = sandbox::parse_lifecycle(sandbox::lifecycle_name(l));
        REQUIRE(back);
        CHECK(*back == l);
    }
    CHECK(sandbox::lifecycle_name(Lifecycle::running) == "running");
    auto odd = sandbox::parse_lifecycle("sleeping");
    REQUIRE_FALSE(odd);
    CHECK(odd.error().code == Code::bad_input);
}

TEST_CASE("state: from_record types the core fields and keeps the others, unknown ones included") {
    json j = {{"type", "sandbox"},
              {"v", 1},
              {"id", "box1"},
              {"state", "running"},
              {"pid", 42},
              {"pid_start", 123456789012ULL},
              {"cgroup", {{"mode", "v2"}, {"dirs", {"/sys/fs/cgroup/dsec/box1"}}}},
              {"rootfs", {{"id", "r1"}, {"layers", {{{"digest", "sha256:aa"}}, {{"digest", "sha256:bb"}}}}}},
              {"labels", {{"team", "a"}}},
              {"from_a_newer_build", {{"nested", json::array({1, 2})}}}};
    auto s = sandbox::State::from_record(j);
    REQUIRE(s);
    CHECK(s->id == "box1");
    CHECK(s->lifecycle == Lifecycle::running);
    CHECK(s->pid == 42);
    CHECK(s->pid_start == 123456789012ULL);
    REQUIRE(s->cgroup);
    CHECK(s->cgroup->mode == "v2");
    CHECK(s->cgroup->dirs == std::vector<std::string>{"/sys/fs/cgroup/dsec/box1"});
    CHECK(s->rootfs_id() == "r1");
    CHECK(s->layer_digests() == std::vector<std::string>{"sha256:aa", "sha256:bb"});
    CHECK(s->extra.contains("from_a_newer_build"));
    CHECK_FALSE(s->extra.contains("pid"));
    // Nothing lost, nothing added beyond what a record always holds.
    CHECK(s->to_record() == j);
}

TEST_CASE("state: a record missing its id or state, or with a bad one, is bad_input") {
    for (const json& bad : {json::array(), json{{"state", "running"}}, json{{"id", "x"}},
                            json{{"id", "x"}, {"state", "asleep"}}, json{{"id", "x"}, {"state", "running"}, {"pid", "1"}},
                            json{{"id", "x"}, {"state", "running"}, {"cgroup", {{"mode", "v2"}}}}}) {
        auto s = sandbox::State::from_record(bad);
        REQUIRE_FALSE(s);
        CHECK(s.error().code == Code::bad_input);
    }
    // A state written before the init ran has no cgroup yet.
    auto early = sandbox::State::from_record(json{{"id", "x"}, {"state", "creating"}});
    REQUIRE(early);
    CHECK_FALSE(early->cgroup);
    CHECK(early->pid == 0);
}

TEST_CASE("state: an unknown field survives a load and save by this build") {
    char tmpl[] = "/tmp/dsec-unit-state.XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    dsec::Paths p{.root = std::string(tmpl) + "/root", .run = tmpl, .store = ""};
    sandbox::Paths paths(p);
    REQUIRE(fs::mkdir_p(paths.state_dir("box"), 0700));
    REQUIRE(fs::atomic_write(paths.state_file("box"),
                             R"({"id":"box","state":"running","pid":7,"future":{"k":[1,"two"]}})"));
    auto loaded = sandbox::load(paths, "box");
    REQUIRE(loaded);
    loaded->lifecycle = Lifecycle::destroying;
    REQUIRE(sandbox::save(paths, *loaded));
    auto text = fs::read_file(paths.state_file("box"));
    REQUIRE(text);
    json back = json::parse(*text);
    CHECK(back["future"] == json{{"k", {1, "two"}}});
    CHECK(back["state"] == "destroying");
    CHECK(back["pid"] == 7);

    REQUIRE(fs::atomic_write(paths.state_file("box"), R"({"id":"box","state":"napping"})"));
    auto odd = sandbox::load(paths, "box");
    REQUIRE_FALSE(odd);
    CHECK(odd.error().code == Code::bad_input);
    auto gone = sandbox::load(paths, "nothing");
    REQUIRE_FALSE(gone);
    CHECK(gone.error().code == Code::not_found);
    CHECK(fs::remove_tree(tmpl));
}

TEST_CASE("state: layer_users counts a live init's layers even in a state this build cannot take whole") {
    char tmpl[] = "/tmp/dsec-unit-users.XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    dsec::Paths p{.root = std::string(tmpl) + "/root", .run = tmpl, .store = ""};
    sandbox::Paths paths(p);
    json layers = {{"layers", {{{"digest", "sha256:aa"}}}}};
    json live = {{"id", "new"}, {"state", "migrating"}, {"pid", ::getpid()},
                 {"pid_start", proc::process_start(::getpid())}, {"rootfs", layers}};
    json dead = {{"id", "old"}, {"state", "running"}, {"pid", 0}, {"rootfs", layers}};
    for (auto& [id, rec] : {std::pair{"new", live}, std::pair{"old", dead}}) {
        REQUIRE(fs::mkdir_p(paths.state_dir(id), 0700));
        REQUIRE(fs::atomic_write(paths.state_file(id), rec.dump()));
    }
    auto users = sandbox::layer_users(paths);
    REQUIRE(users);
    CHECK(users->size() == 1);
    CHECK(users->at("sha256:aa") == 1);
    CHECK(fs::remove_tree(tmpl));
}
