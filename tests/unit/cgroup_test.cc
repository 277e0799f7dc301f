// Cgroup layout detection from mountinfo and mounts text: v1, v2 and hybrid hosts.
#include <doctest/doctest.h>

#include "dsec/cgroup/cgroup.h"
#include "dsec/sys/fs.h"

using namespace dsec;

namespace {
const char* kHybrid =
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 30 0:33 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
}  // namespace

TEST_CASE("cgroup: a hybrid host has v1 controllers and a unified tree") {
    auto l = cgroup::parse_mountinfo(kHybrid);
    REQUIRE(l);
    CHECK(l->mode == cgroup::Mode::hybrid);
    CHECK(l->unified == "/sys/fs/cgroup/unified");
    CHECK(l->v1.at("memory") == "/sys/fs/cgroup/memory");
    CHECK(l->v1.at("cpuacct") == "/sys/fs/cgroup/cpuacct");
    CHECK(l->v1.count("name=systemd") == 0);
    cgroup::Cgroup cg(*l, "dsec", "abc");
    CHECK(cg.unified_dir() == "/sys/fs/cgroup/unified/dsec/abc");
    CHECK(cg.dirs().size() == 6);  // cpu, cpuacct, freezer, memory, pids, unified
    CHECK(cg.needs_v1_join());
}

TEST_CASE("cgroup: v2 only and v1 only") {
    auto v2 = cgroup::parse_mountinfo("25 20 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n");
    REQUIRE(v2);
    CHECK(v2->mode == cgroup::Mode::v2);
    CHECK(v2->v1.empty());
    cgroup::Cgroup cg(*v2, "dsec", "x");
    CHECK(cg.dirs() == std::vector<std::string>{"/sys/fs/cgroup/dsec/x"});
    CHECK_FALSE(cg.needs_v1_join());

    // Controllers sharing one hierarchy ("cpu,cpuacct") give one directory.
    auto v1 = cgroup::parse_mountinfo("31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
                                      "34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
    REQUIRE(v1);
    CHECK(v1->mode == cgroup::Mode::v1);
    CHECK(v1->v1.at("cpu") == v1->v1.at("cpuacct"));
    CHECK(cgroup::Cgroup(*v1, "dsec", "y").dirs().size() == 2);
}

TEST_CASE("cgroup: escaped mount points and no cgroups at all") {
    auto l = cgroup::parse_mountinfo("40 30 0:37 / /sys/fs/my\\040cg rw - cgroup2 cgroup2 rw\n");
    REQUIRE(l);
    CHECK(l->unified == "/sys/fs/my cg");
    auto none = cgroup::parse_mountinfo("22 1 0:21 / /proc rw - proc proc rw\n");
    REQUIRE_FALSE(none);
    CHECK(none.error().code == Code::not_found);
}

TEST_CASE("the cgroup parent is derived from the run directory") {
    CHECK(cgroup::parent_for_run("/run/dsec") == "dsec");
    auto a = cgroup::parent_for_run("/tmp/a/run");
    CHECK(a.rfind("dsec-", 0) == 0);
    CHECK(a.size() == 17);
    CHECK(a == cgroup::parent_for_run("/tmp/a/run"));
    CHECK(a != cgroup::parent_for_run("/tmp/b/run"));
}

TEST_CASE("cgroup: /proc/self/mounts gives the layout mountinfo gives") {
    auto l = cgroup::parse_mounts("tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n"
                                  "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,relatime,cpu,cpuacct 0 0\n"
                                  "cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,memory 0 0\n"
                                  "cgroup /sys/fs/cgroup/systemd cgroup rw,xattr,name=systemd 0 0\n"
                                  "cgroup2 /sys/fs/cgroup/my\\040unified cgroup2 rw,nsdelegate 0 0\n");
    REQUIRE(l);
    CHECK(l->mode == cgroup::Mode::hybrid);
    CHECK(l->unified == "/sys/fs/cgroup/my unified");
    CHECK(l->v1.at("cpu") == "/sys/fs/cgroup/cpu,cpuacct");
    CHECK(l->v1.at("cpuacct") == "/sys/fs/cgroup/cpu,cpuacct");
    CHECK(l->v1.at("memory") == "/sys/fs/cgroup/memory");
    CHECK(l->v1.size() == 3);
    auto v2 = cgroup::parse_mounts("cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n");
    REQUIRE(v2);
    CHECK(v2->mode == cgroup::Mode::v2);
    auto none = cgroup::parse_mounts("proc /proc proc rw 0 0\n");
    REQUIRE_FALSE(none);
    CHECK(none.error().code == Code::not_found);

    // And on this host, both files give the same answer.
    auto mounts = fs::read_file("/proc/self/mounts");
    auto info = fs::read_file("/proc/self/mountinfo");
    REQUIRE(mounts);
    REQUIRE(info);
    auto a = cgroup::parse_mounts(*mounts);
    auto b = cgroup::parse_mountinfo(*info);
    REQUIRE(a.has_value() == b.has_value());
    if (a) {
        CHECK(a->mode == b->mode);
        CHECK(a->unified == b->unified);
        CHECK(a->v1 == b->v1);
    }
}

TEST_CASE("the layout from /proc/self/cgroup and the usual mount points") {
    using cgroup::Mounted;
    auto at = [](std::map<std::string, Mounted> m) {
        return [m](const std::string& path) { return m.count(path) ? m.at(path) : Mounted::none; };
    };
    const char* hybrid = "9:name=systemd:/\n8:pids:/\n7:blkio:/\n4:memory:/user.slice\n"
                         "2:cpu,cpuacct:/\n0::/user.slice/a.scope\n";
    std::map<std::string, Mounted> systemd = {{"/sys/fs/cgroup", Mounted::other},
                                              {"/sys/fs/cgroup/unified", Mounted::cgroup2},
                                              {"/sys/fs/cgroup/pids", Mounted::cgroup1},
                                              {"/sys/fs/cgroup/memory", Mounted::cgroup1},
                                              {"/sys/fs/cgroup/cpu,cpuacct", Mounted::cgroup1}};
    auto l = cgroup::parse_usual(hybrid, at(systemd));
    REQUIRE(l);
    CHECK(l->mode == cgroup::Mode::hybrid);
    CHECK(l->unified == "/sys/fs/cgroup/unified");
    CHECK(l->v1 == std::map<std::string, std::string>{{"pids", "/sys/fs/cgroup/pids"},
                                                      {"memory", "/sys/fs/cgroup/memory"},
                                                      {"cpu", "/sys/fs/cgroup/cpu,cpuacct"},
                                                      {"cpuacct", "/sys/fs/cgroup/cpu,cpuacct"}});
    // The same mounts listed in /proc/self/mounts give the same layout.
    auto m = cgroup::parse_mounts("cgroup /sys/fs/cgroup/pids cgroup rw,pids 0 0\n"
                                  "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
                                  "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n"
                                  "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n");
    REQUIRE(m);
    CHECK(m->unified == l->unified);
    CHECK(m->v1 == l->v1);

    auto v2 = cgroup::parse_usual("0::/init.scope\n", at({{"/sys/fs/cgroup", Mounted::cgroup2}}));
    REQUIRE(v2);
    CHECK(v2->mode == cgroup::Mode::v2);
    CHECK(v2->unified == "/sys/fs/cgroup");
    // Never mounted: no "0::" line, so no unified tree.
    auto v1 = cgroup::parse_usual("3:memory:/\n", at({{"/sys/fs/cgroup/memory", Mounted::cgroup1}}));
    REQUIRE(v1);
    CHECK(v1->mode == cgroup::Mode::v1);

    // Anything elsewhere than usual: no answer, so the mounts are read.
    auto moved = systemd;
    moved["/sys/fs/cgroup/memory"] = Mounted::none;  // memory mounted on /cgroup/memory, say
    CHECK_FALSE(cgroup::parse_usual(hybrid, at(moved)));
    moved = systemd;
    moved["/sys/fs/cgroup/unified"] = Mounted::other;  // a directory, not the mount's root
    CHECK_FALSE(cgroup::parse_usual(hybrid, at(moved)));
    CHECK_FALSE(cgroup::parse_usual("0::/\n", at({})));
    CHECK_FALSE(cgroup::parse_usual("", at({})));
    CHECK_FALSE(cgroup::parse_usual("garbage\n", at(systemd)));

    // And on this host, the same answer as the mounts.
    auto own = fs::read_file("/proc/self/cgroup");
    auto mounts = fs::read_file("/proc/self/mounts");
    REQUIRE(own);
    REQUIRE(mounts);
    auto here = cgroup::parse_usual(*own, cgroup::mounted_at);
    auto all = cgroup::parse_mounts(*mounts);
    // Where the mounts put every hierarchy in systemd's places, so must this.
    bool usual = all && (all->unified.empty() || all->unified == "/sys/fs/cgroup" ||
                         all->unified == "/sys/fs/cgroup/unified");
    if (all)
        for (auto& [controller, at] : all->v1) usual = usual && at.rfind("/sys/fs/cgroup/", 0) == 0;
    if (usual) REQUIRE(here);
    if (here && all) {
        CHECK(here->mode == all->mode);
        CHECK(here->unified == all->unified);
        CHECK(here->v1 == all->v1);
    }
}
