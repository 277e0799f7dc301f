// fs::write_text: the one way a control file (cgroup, sysfs, /proc/sys) is written.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>

#include "dsec/sys/fs.h"

using namespace dsec;

namespace {
// A temporary directory for one test, removed with what is in it.
fs::TempDir temp_dir() {
    const char* tmp = std::getenv("TMPDIR");
    auto dir = fs::TempDir::make(tmp && *tmp ? tmp : "/tmp", "dsec-write-text-");
    REQUIRE(dir);
    return std::move(*dir);
}
}  // namespace

TEST_CASE("write_text replaces a file's content with the value, as a shell's > does") {
    auto dir = temp_dir();
    std::string path = dir.path() + "/memory.max";
    REQUIRE(fs::atomic_write(path, "a longer old value\n"));
    REQUIRE(fs::write_text(path, "1024"));
    CHECK(*fs::read_file(path) == "1024");
    REQUIRE(fs::write_text(path, "max\n"));
    CHECK(*fs::read_file(path) == "max\n");
}

TEST_CASE("write_text never creates a file: a missing control file is not_found") {
    auto dir = temp_dir();
    std::string path = dir.path() + "/cgroup.freeze";
    auto r = fs::write_text(path, "1");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Code::not_found);
    CHECK(r.error().op == "open");
    CHECK(r.error().path == path);
    CHECK_FALSE(fs::exists(path));
}

TEST_CASE("a refused write names the value in its context, apart from the message") {
    // /dev/full refuses every write with ENOSPC, as a control file refuses a bad value.
    auto r = fs::write_text("/dev/full", "FROZEN");
    REQUIRE_FALSE(r);
    CHECK(r.error().err == ENOSPC);
    CHECK(r.error().op == "write");
    CHECK(r.error().steps == std::vector<std::string>{"value FROZEN"});
    CHECK(r.error().describe().find("value FROZEN") != std::string::npos);
}
