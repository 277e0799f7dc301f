#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "dsec/sandbox/pool.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/paths.h"
#include "dsec/sys/process.h"

using namespace dsec;
namespace pool = dsec::sandbox::pool;

namespace {

void touch(const std::string& path) { ::close(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600)); }

std::string me() { return std::to_string(::getpid()) + "." + std::to_string(proc::process_start(::getpid())); }

}  // namespace

TEST_CASE("a pool key is the digest of its configuration, and only that shape is a key") {
    nlohmann::json a = {{"layers", {"base"}}, {"memory", "512M"}};
    nlohmann::json b = {{"layers", {"base"}}, {"memory", "1G"}};
    CHECK(pool::key_of(a) == pool::key_of(a));
    CHECK(pool::key_of(a) != pool::key_of(b));
    CHECK(pool::valid_key(pool::key_of(a)));
    for (std::string bad : {"", "../sandboxes", "0123456789ABCDEF", "0123456789abcde", "0123456789abcdef0",
                            "0123456789abcde/"})
        CHECK_FALSE(pool::valid_key(bad));
}

TEST_CASE("a census tells ready, making, claimed and stale entries apart") {
    auto dir = fs::TempDir::make("/tmp", "dsec-pool-test.");
    REQUIRE(dir);
    dsec::Paths p;
    p.root = dir->path() + "/root";
    p.run = dir->path() + "/run";
    sandbox::Paths paths(p);
    auto at = pool::at(paths, pool::key_of({{"v", 1}}));
    CHECK_FALSE(pool::census(at));  // no such pool yet
    REQUIRE(pool::configure(at, 3, {{"v", 1}}));
    touch(at.dir + "/0123456789ab");                            // ready
    touch(at.dir + "/.making.aaaaaaaaaaaa." + me());            // being made by a live process
    touch(at.dir + "/.claimed.bbbbbbbbbbbb." + me());           // drawn by a live process
    touch(at.dir + "/.claimed.cccccccccccc.999999999.1");       // its process is gone
    touch(at.dir + "/.making.dddddddddddd.1.1");                // pid 1 did not start at tick 1
    for (std::string junk : {".claimed.x", ".making..1.2", ".other.eeeeeeeeeeee.1.2", "has space", ".tmp-1"})
        touch(at.dir + "/" + junk);
    auto c = pool::census(at);
    REQUIRE(c);
    CHECK(c->size == 3);
    CHECK(c->ready == std::vector<std::string>{"0123456789ab"});
    CHECK(c->making == std::vector<std::string>{"aaaaaaaaaaaa"});
    CHECK(c->claimed == std::vector<std::string>{"bbbbbbbbbbbb"});
    CHECK(c->stale.size() == 2);
    auto keys = pool::keys(paths);
    REQUIRE(keys);
    CHECK(*keys == std::vector<std::string>{at.key});

    // A claim passes to another process by name; release drops this process's.
    touch(at.dir + "/.claimed.ffffffffffff." + me());
    REQUIRE(pool::hand_over(at, "ffffffffffff", 999999999, 7));
    CHECK(fs::exists(at.dir + "/.claimed.ffffffffffff.999999999.7"));
    CHECK_FALSE(fs::exists(at.dir + "/.claimed.ffffffffffff." + me()));
    CHECK_FALSE(pool::hand_over(at, "ffffffffffff", 999999999, 7));  // no longer this process's
    touch(at.dir + "/.claimed.ffffffffffff." + me());
    pool::release(at, "ffffffffffff");
    CHECK_FALSE(fs::exists(at.dir + "/.claimed.ffffffffffff." + me()));
}
