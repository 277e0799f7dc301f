// dsec-run create's options: what it refuses before anything is made.
#include <doctest/doctest.h>

#include <functional>

#include "dsec/sandbox/create_args.h"

using namespace dsec;

namespace {
bool refused_as_usage(const sandbox::CreateArgs& a) {
    auto o = a.to_options();
    return !o && o.error().code == Code::usage;
}
}  // namespace

TEST_CASE("CreateArgs: invalid values are usage errors") {
    using Args = sandbox::CreateArgs;
    const std::vector<std::pair<const char*, std::function<void(Args&)>>> bad = {
        {"id", [](Args& a) { a.id = "../escape"; }},
        {"hostname", [](Args& a) { a.hostname = std::string(64, 'h'); }},
        {"label", [](Args& a) { a.labels = {"noequals"}; }},
        {"workdir", [](Args& a) { a.workdir = "relative"; }},
        {"env", [](Args& a) { a.env = {"=x"}; }},
        {"ulimit soft above hard", [](Args& a) { a.ulimits = {"nofile=10:5"}; }},
        {"ulimit name", [](Args& a) { a.ulimits = {"stack=1M"}; }},
        {"seccomp", [](Args& a) { a.seccomp = "/nonexistent/profile.json"; }},
        {"policy", [](Args& a) { a.policy = "/nonexistent/policy.json"; }},
        {"pids: the init alone", [](Args& a) { a.pids = "1"; }},
    };
    // (A plain element, not a structured binding: clang 14 cannot capture one in
    // CAPTURE's lambda.)
    for (auto& item : bad) {
        const auto& what = item.first;
        CAPTURE(what);
        Args a;
        item.second(a);
        CHECK(refused_as_usage(a));
    }
}

TEST_CASE("CreateArgs: values are parsed into the options") {
    sandbox::CreateArgs a;
    a.memory = "512M";
    a.pids = "max";
    a.ttl = "30m";
    a.labels = {"job=eval", "team=a=b"};
    a.ulimits = {"nofile=1024:4096", "core=0"};
    a.cap_drop = {"ALL"};
    auto o = a.to_options();
    if (!o && o.error().code == Code::not_found) return;  // no dsec-init beside the test binary
    REQUIRE(o);
    CHECK(o->limits.memory == 512ull << 20);
    CHECK(o->limits.pids == 0);
    CHECK(o->ttl_ms == 30 * 60 * 1000);
    CHECK(o->labels.at("job") == "eval");
    CHECK(o->labels.at("team") == "a=b");
    CHECK(o->security.rlimits.nofile_soft == 1024);
    CHECK(o->security.rlimits.nofile_hard == 4096);
    CHECK(o->security.caps == 0);
    CHECK(o->security.userns);
}
