// Detached execs: the rotating output files that cap what a command can leave on disk,
// and exec keys.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <string>

#include "dsec/sandbox/detached.h"
#include "dsec/sys/fs.h"

using namespace dsec;
using namespace dsec::sandbox;

namespace {
std::string temp_dir() {
    char dir[] = "/tmp/dsec-detached-XXXXXX";
    REQUIRE(::mkdtemp(dir) != nullptr);
    return dir;
}
std::string read(const std::string& path) {
    auto text = fs::read_file(path);
    return text ? *text : "<none>";
}
}  // namespace

TEST_CASE("detached: output rotates at the cap, keeping at most two files") {
    std::string dir = temp_dir();
    RotatingFile f(dir, "stdout", 4);
    REQUIRE(f.open());
    auto yes = [] { return true; };
    REQUIRE(f.write("abc", yes));
    CHECK(read(dir + "/stdout") == "abc");
    REQUIRE(f.write("defghij", yes));  // fills one file, rotates, starts a third
    CHECK(read(dir + "/stdout.1") == "efgh");
    CHECK(read(dir + "/stdout") == "ij");
    CHECK(f.total() == 10);
    CHECK(f.dropped() == 4);  // "abcd" went with the second rotation
    REQUIRE(f.write(std::string(100, 'x'), yes));
    CHECK(read(dir + "/stdout") == "xx");
    CHECK(read(dir + "/stdout.1") == "xxxx");
    CHECK(f.total() == 110);
    CHECK(f.dropped() == 104);
    (void)fs::remove_tree(dir);
}

TEST_CASE("detached: no new file once the sandbox is going; the rest is dropped") {
    std::string dir = temp_dir();
    RotatingFile f(dir, "stderr", 4);
    REQUIRE(f.open());
    int asked = 0;
    auto no = [&] {
        asked++;
        return false;
    };
    REQUIRE(f.write("123456789", no));
    CHECK(read(dir + "/stderr") == "1234");
    CHECK_FALSE(fs::exists(dir + "/stderr.1"));
    REQUIRE(f.write("more", no));
    CHECK(asked == 1);
    CHECK(f.total() == 13);
    CHECK(f.dropped() == 9);
    (void)fs::remove_tree(dir);
}

TEST_CASE("detached: exec keys are 8 lowercase hex digits") {
    CHECK(valid_exec_key("0a1b2c3d"));
    CHECK_FALSE(valid_exec_key("0A1B2C3D"));
    CHECK_FALSE(valid_exec_key("0a1b2c3"));
    CHECK_FALSE(valid_exec_key("../../x1"));
    CHECK_FALSE(valid_exec_key(""));
}
