// sandbox::live_record: what ls and inspect show, from a state directory.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include "dsec/sandbox/live.h"
#include "dsec/sys/fs.h"

using namespace dsec;
using nlohmann::json;

TEST_CASE("live_record: recorded state, dead for a running one without its init, fields always present") {
    char tmpl[] = "/tmp/dsec-unit-live.XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    dsec::Paths p{.root = std::string(tmpl) + "/root", .run = tmpl, .store = ""};
    sandbox::Paths paths(p);
    REQUIRE(fs::mkdir_p(paths.sandboxes(), 0700));

    CHECK_FALSE(sandbox::live_record(paths, "gone", false).has_value());

    REQUIRE(::mkdir(paths.state_dir("young").c_str(), 0700) == 0);
    auto young = sandbox::live_record(paths, "young", false);
    REQUIRE(young);
    CHECK((*young)["state"] == "creating");
    CHECK((*young)["labels"] == json::object());
    for (const char* key : {"memory", "cpu_s", "oom_kills", "age_s", "last_exec"}) CHECK(young->contains(key));

    // Running on paper, its init long gone (pid 0 never is one): dead.
    sandbox::State st{.id = "ghost", .lifecycle = sandbox::Lifecycle::running, .pid = 0};
    st.extra = {{"labels", {{"job", "eval"}}}, {"created_unix", sandbox::now_unix() - 10}, {"hostname", "ghost"}};
    REQUIRE(::mkdir(paths.state_dir("ghost").c_str(), 0700) == 0);
    REQUIRE(sandbox::save(paths, st));
    auto brief = sandbox::live_record(paths, "ghost", false);
    REQUIRE(brief);
    CHECK((*brief)["state"] == "dead");
    CHECK((*brief)["labels"]["job"] == "eval");
    CHECK((*brief)["age_s"].get<int64_t>() >= 10);
    CHECK_FALSE(brief->contains("hostname"));
    auto full = sandbox::live_record(paths, "ghost", true);
    REQUIRE(full);
    CHECK((*full)["hostname"] == "ghost");
    CHECK((*full)["state"] == "dead");

    CHECK(fs::remove_tree(tmpl));
}
