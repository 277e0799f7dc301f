// Binds: parsing SRC:DST[:ro|rw], the destinations refused, path overlap, state records.
#include <doctest/doctest.h>

#include "dsec/sandbox/bind.h"

using namespace dsec::sandbox;

TEST_CASE("bind: SRC:DST, read-only unless :rw") {
    auto b = parse_bind("/srv/data:/data");
    REQUIRE(b);
    CHECK(b->src == "/srv/data");
    CHECK(b->dst == "/data");
    CHECK(b->read_only);
    b = parse_bind("rel/dir:/mnt/x/:rw");
    REQUIRE(b);
    CHECK(b->src == "rel/dir");
    CHECK(b->dst == "/mnt/x");
    CHECK_FALSE(b->read_only);
    CHECK(parse_bind("/a:/b:ro")->read_only);
    for (const char* bad : {"/a", "/a:", ":/b", "/a:/b:rx", "/a:/b:c:ro", "/a:b", "/a:/"})
        CHECK_MESSAGE(parse_bind(bad).error().code == dsec::Code::usage, bad);
}

TEST_CASE("bind: destinations the sandbox's own mounts hold are refused") {
    for (const char* bad : {"/proc", "/proc/sys", "/dev/shm", "/sys", "/tmp/x", "/dsec-init", "/a/../proc",
                            "/a/./b", "//a", "/a//b"})
        CHECK_MESSAGE(!check_bind_destination(bad), bad);
    for (const char* ok : {"/data", "/procfs", "/devices/x", "/mnt/tmp", "/etc/hosts.d", "/dsec-init.d"})
        CHECK_MESSAGE(check_bind_destination(ok), ok);
}

TEST_CASE("bind: overlap is by whole components") {
    CHECK(paths_overlap("/var/lib/dsec", "/var/lib/dsec"));
    CHECK(paths_overlap("/var/lib/dsec/layers", "/var/lib/dsec"));
    CHECK(paths_overlap("/var", "/var/lib/dsec"));
    CHECK(paths_overlap("/", "/run/dsec"));
    CHECK_FALSE(paths_overlap("/var/lib/dsec2", "/var/lib/dsec"));
    CHECK_FALSE(paths_overlap("/srv", "/run/dsec"));
}

TEST_CASE("bind: the state record round-trips; a bad entry is dropped") {
    std::vector<Bind> binds = {{"/srv/a", "/a", true}, {"/srv/b", "/b", false}};
    auto rec = binds_record(binds);
    CHECK(rec.dump() == R"([{"dst":"/a","mode":"ro","src":"/srv/a"},{"dst":"/b","mode":"rw","src":"/srv/b"}])");
    rec.push_back({{"src", "/x"}, {"dst", "/proc/x"}});
    auto back = binds_from_record(rec);
    REQUIRE(back.size() == 2);
    CHECK(back[1].src == "/srv/b");
    CHECK_FALSE(back[1].read_only);
    CHECK(binds_from_record(nlohmann::json("junk")).empty());
}
