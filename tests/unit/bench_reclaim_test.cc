// dsec-bench reclaim's pieces that need no sandbox: --fill, the touch command, the
// host memory guard, the fill files, KSM settings saved and put back.
#include <doctest/doctest.h>

#include "dsec/bench/reclaim.h"
#include "dsec/sys/fs.h"

using namespace dsec;

TEST_CASE("bench reclaim: --fill takes text or random") {
    CHECK(*bench::parse_fill("text") == bench::Fill::text);
    CHECK(*bench::parse_fill("random") == bench::Fill::random);
    auto bad = bench::parse_fill("zeros");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == Code::usage);
    CHECK(std::string(bench::fill_name(bench::Fill::random)) == "random");
}

TEST_CASE("bench reclaim: the touch command holds both halves and waits for both") {
    std::string text = bench::touch_command(bench::Fill::text, 1000, 2000, "/data/shared");
    CHECK(text.find("cat /data/shared | dd bs=1000 count=1 iflag=fullblock") != std::string::npos);
    CHECK(text.find("dd bs=2000 count=1 iflag=fullblock") != std::string::npos);
    CHECK(text.find("seq ") != std::string::npos);
    CHECK(text.find("head -c 2000 /dev/urandom") == std::string::npos);
    std::string random = bench::touch_command(bench::Fill::random, 1000, 2000, "/data/shared");
    CHECK(random.find("head -c 2000 /dev/urandom | dd bs=2000") != std::string::npos);
    CHECK(random.find("while [ ! -e /tmp/.bench-shared ] || [ ! -e /tmp/.bench-own ]") != std::string::npos);
    // An empty half starts no process but is still counted as ready.
    std::string own_only = bench::touch_command(bench::Fill::text, 0, 2000, "/data/shared");
    CHECK(own_only.find("cat /data/shared") == std::string::npos);
    CHECK(own_only.find("touch /tmp/.bench-shared;") != std::string::npos);
}

TEST_CASE("bench reclaim: the guard keeps the floor free") {
    constexpr uint64_t G = 1ULL << 30;
    CHECK(bench::room_for(10 * G, 8 * G, 2 * G));
    CHECK_FALSE(bench::room_for(10 * G, 8 * G + 1, 2 * G));
    CHECK_FALSE(bench::room_for(G, 0, 2 * G));  // under the floor already
    CHECK(bench::room_for(2 * G, 0, 2 * G));
}

TEST_CASE("bench reclaim: fill files have the size asked, text is lines of numbers") {
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-fill.");
    REQUIRE(tmp);
    std::string text = tmp->path() + "/t", random = tmp->path() + "/r";
    REQUIRE(bench::write_fill(text, bench::Fill::text, 3 * (1 << 20) + 5));
    REQUIRE(bench::write_fill(random, bench::Fill::random, 4097));
    auto t = fs::read_file(text);
    auto r = fs::read_file(random);
    REQUIRE(t);
    REQUIRE(r);
    CHECK(t->size() == 3 * (1 << 20) + 5);
    CHECK(r->size() == 4097);
    CHECK(t->substr(0, 13) == "100000000000\n");
    CHECK(t->find_first_not_of("0123456789\n") == std::string::npos);
    CHECK_FALSE(bench::write_fill(tmp->path() + "/no/such/dir", bench::Fill::text, 1));
}

TEST_CASE("bench reclaim: KSM settings are read and written back in a fake sysfs") {
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-ksm.");
    REQUIRE(tmp);
    std::string dir = tmp->path();
    auto missing = bench::read_ksm_settings(dir);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == Code::unsupported);
    REQUIRE(fs::atomic_write(dir + "/run", "0\n"));
    REQUIRE(fs::atomic_write(dir + "/pages_to_scan", "100\n"));
    REQUIRE(fs::atomic_write(dir + "/sleep_millisecs", "20\n"));
    auto saved = bench::read_ksm_settings(dir);
    REQUIRE(saved);
    CHECK(saved->to_json() == nlohmann::json{{"run", 0}, {"pages_to_scan", 100}, {"sleep_millisecs", 20}});
    {
        bench::KsmRestore restore(dir, *saved);
        // Empty fields are left alone.
        REQUIRE(bench::write_ksm_settings(dir, {"1", "4000", ""}));
        CHECK(*fs::read_file(dir + "/pages_to_scan") == "4000");
        CHECK(*fs::read_file(dir + "/sleep_millisecs") == "20\n");
    }
    CHECK(*fs::read_file(dir + "/run") == "0");
    CHECK(*fs::read_file(dir + "/pages_to_scan") == "100");
}

