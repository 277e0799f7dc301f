// What listings (ls, inspect, dsec-reclaim status) make of a state directory that a
// create or destroy is working on: never "broken" for a state file not there yet.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include "dsec/sandbox/listing.h"
#include "dsec/sys/fs.h"

using namespace dsec;

TEST_CASE("listing: a state directory without its state file is creating, one gone is skipped") {
    char tmpl[] = "/tmp/dsec-unit-listing.XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    dsec::Paths p{.root = std::string(tmpl) + "/root", .run = tmpl, .store = ""};
    sandbox::Paths paths(p);
    REQUIRE(fs::mkdir_p(paths.sandboxes(), 0700));

    // Gone (destroyed since it was listed): nothing to show.
    CHECK_FALSE(sandbox::listed_state(paths, "gone").has_value());

    // The directory alone: a create that has not written its state, or a destroy at work.
    REQUIRE(::mkdir(paths.state_dir("young").c_str(), 0700) == 0);
    auto young = sandbox::listed_state(paths, "young");
    REQUIRE(young.has_value());
    CHECK(young->lifecycle == sandbox::Lifecycle::creating);
    CHECK(young->id == "young");

    // A state file that does not parse is broken.
    REQUIRE(::mkdir(paths.state_dir("bad").c_str(), 0700) == 0);
    REQUIRE(fs::atomic_write(paths.state_file("bad"), "{\"state\":"));
    auto bad = sandbox::listed_state(paths, "bad");
    REQUIRE(bad.has_value());
    CHECK(bad->lifecycle == sandbox::Lifecycle::broken);

    // A state file is the state.
    REQUIRE(::mkdir(paths.state_dir("ok").c_str(), 0700) == 0);
    REQUIRE(sandbox::save(paths, sandbox::State{.id = "ok", .lifecycle = sandbox::Lifecycle::running, .pid = 1}));
    auto ok = sandbox::listed_state(paths, "ok");
    REQUIRE(ok.has_value());
    CHECK(ok->lifecycle == sandbox::Lifecycle::running);
    CHECK(ok->pid == 1);

    CHECK(fs::remove_tree(tmpl));
}
