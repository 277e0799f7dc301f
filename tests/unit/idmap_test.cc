#include <doctest/doctest.h>
#include <unistd.h>

#include <set>

#include "dsec/ns/idrange.h"

using namespace dsec;

namespace {
// The kernel's bucket for a host uid in its table of user structs (kernel/user.c).
unsigned uid_bucket(uint32_t uid) { return ((uid >> 7) + uid) & 127; }
}  // namespace

TEST_CASE("id map: each sandbox's range is mapped whole, once, with root rotated within it") {
    const uint32_t first = 5 * 65536;  // rotated by 1 + 5 mod 127
    ns::IdMap map = ns::sandbox_id_map(first, 65536);
    CHECK(map.text() == "0 327686 65408\n65408 327680 6\n65414 393094 122\n");
    CHECK(map.outside(0) == first + 6);
    CHECK(map.outside(1000) == first + 1006);
    CHECK(map.outside(65407) == first + 65413);
    CHECK(map.outside(65408) == first);
    CHECK(map.outside(65413) == first + 5);
    CHECK(map.outside(65414) == first + 65414);
    CHECK(map.outside(65535) == first + 65535);
    CHECK_FALSE(map.outside(65536));
    CHECK_FALSE(map.inside(first - 1));
    CHECK_FALSE(map.inside(first + 65536));
    // A bijection between 0..65535 and the range.
    std::set<uint32_t> hosts;
    for (uint32_t id = 0; id < 65536; id++) {
        auto h = map.outside(id);
        REQUIRE(h);
        REQUIRE(*h >= first);
        REQUIRE(*h - first < 65536);
        REQUIRE(map.inside(*h) == id);
        hosts.insert(*h);
    }
    CHECK(hosts.size() == 65536);
    // The ends of the host range are 65408 and 65535 inside, in that order: a group range
    // "65408 65535", compared by host id, holds every group of the sandbox.
    CHECK(map.inside(first) == 65408);
    CHECK(map.inside(first + 65535) == 65535);
    // Too small to rotate: one line.
    CHECK(ns::sandbox_id_map(1000, 100).text() == "0 1000 100\n");
}

TEST_CASE("id map: 127 consecutive sandboxes' roots fall in 127 different buckets of the kernel's uid hash") {
    std::set<unsigned> buckets;
    for (uint32_t slot = 0; slot < 127; slot++)
        buckets.insert(uid_bucket(*ns::sandbox_id_map((1u << 30) + slot * 65536, 65536).outside(0)));
    CHECK(buckets.size() == 127);
    // Unrotated, they all shared bucket 0.
    CHECK(uid_bucket((1u << 30) + 77 * 65536) == 0);
}

TEST_CASE("id map: this process's own map reads back") {
    auto map = ns::read_id_map(int(::getpid()), "uid_map");
    REQUIRE_MESSAGE(map, (map ? "" : map.error().describe()));
    REQUIRE(!map->lines.empty());
    CHECK(map->inside(::getuid()).has_value());
    CHECK_FALSE(ns::read_id_map(0, "uid_map"));
}
