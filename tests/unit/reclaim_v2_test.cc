// memory.reclaim on cgroup v2, against a fake cgroup directory (this host's memory
// controller is on v1, so the kernel path runs nowhere in the suite): what push_out
// writes where, what it returns, and how it fails.
#include <doctest/doctest.h>

#include <cerrno>
#include <sys/stat.h>

#include "dsec/reclaim/pause.h"
#include "dsec/sys/fs.h"

using namespace dsec;

namespace {
// A v2 layout whose unified tree is `root`, with sandbox "sb" under parent "p".
cgroup::Layout fake_v2(const std::string& root) {
    cgroup::Layout l;
    l.mode = cgroup::Mode::v2;
    l.unified = root;
    return l;
}

void put(const std::string& path, const std::string& text) { REQUIRE(fs::atomic_write(path, text)); }
}  // namespace

TEST_CASE("reclaim v2: push_out asks memory.reclaim for all the group is charged and reads the use after") {
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-v2.");
    REQUIRE(tmp);
    auto layout = fake_v2(tmp->path());
    std::string dir = reclaim::memory_dir(layout, "p", "sb");
    CHECK(dir == tmp->path() + "/p/sb");
    REQUIRE(fs::mkdir_p(dir));
    put(dir + "/memory.stat", "anon 3000\nfile 1000\nkernel 96\n");
    put(dir + "/memory.current", "4096\n");
    put(dir + "/memory.swap.current", "512\n");
    put(dir + "/memory.reclaim", "");
    cgroup::Cgroup cg(layout, "p", "sb");

    auto after = reclaim::push_out(layout, cg, dir);
    REQUIRE(after);
    // One write of the whole charge, as a decimal byte count.
    CHECK(*fs::read_file(dir + "/memory.reclaim") == "4096");
    CHECK(after->charged == 4096);
    CHECK(after->resident == 3000);
    CHECK(after->page_cache == 1000);
    CHECK(after->swapped == 512);
}

TEST_CASE("reclaim v2: push_out fails with the path when the group or its files are missing") {
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-v2.");
    REQUIRE(tmp);
    auto layout = fake_v2(tmp->path());
    cgroup::Cgroup cg(layout, "p", "sb");
    std::string dir = reclaim::memory_dir(layout, "p", "sb");

    // No memory controller at all.
    auto none = reclaim::push_out(layout, cg, "");
    REQUIRE_FALSE(none);
    CHECK(none.error().code == Code::unsupported);

    // No group: memory.stat cannot be read, nothing is written.
    auto gone = reclaim::push_out(layout, cg, dir);
    REQUIRE_FALSE(gone);
    CHECK(gone.error().err == ENOENT);

    // A kernel without memory.reclaim (before 5.19): the open fails, named.
    REQUIRE(fs::mkdir_p(dir));
    put(dir + "/memory.stat", "anon 10\nfile 0\n");
    put(dir + "/memory.current", "10\n");
    auto old_kernel = reclaim::push_out(layout, cg, dir);
    REQUIRE_FALSE(old_kernel);
    CHECK(old_kernel.error().err == ENOENT);
    CHECK(old_kernel.error().path == dir + "/memory.reclaim");

    // A write the kernel refuses other than with EAGAIN is an error, not a shortfall.
    REQUIRE(::mkdir((dir + "/memory.reclaim").c_str(), 0755) == 0);
    auto refused = reclaim::push_out(layout, cg, dir);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().err == EISDIR);
}
