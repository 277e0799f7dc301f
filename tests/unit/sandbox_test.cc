// dsec-run's value parsing: sizes, CPUs, durations, users, ids, env; what a destroy leaves.
#include <doctest/doctest.h>

#include "dsec/sandbox/exec.h"
#include "dsec/sandbox/sandbox.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/user.h"

using namespace dsec;
using namespace dsec::sandbox;

TEST_CASE("sandbox: sizes") {
    CHECK(*parse_size("512M") == 512ull << 20);
    CHECK(*parse_size("2G") == 2ull << 30);
    CHECK(*parse_size("1.5G") == (3ull << 30) / 2);
    CHECK(*parse_size("64k") == 65536);
    CHECK(*parse_size("1GiB") == 1ull << 30);
    CHECK(*parse_size("4096") == 4096);
    for (const char* bad : {"12X", "", "M", "-1G", "1.2.3M", "0"}) {
        auto r = parse_size(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == Code::usage);
    }
}

TEST_CASE("sandbox: cpus, counts, durations") {
    CHECK(*parse_cpus("0.5") == doctest::Approx(0.5));
    CHECK(*parse_cpus("2") == doctest::Approx(2));
    CHECK_FALSE(parse_cpus("0"));
    CHECK_FALSE(parse_cpus("two"));
    CHECK(*parse_count("64", "--pids") == 64);
    CHECK_FALSE(parse_count("0", "--pids"));
    CHECK_FALSE(parse_count("-3", "--pids"));
    CHECK(*parse_duration_ms("30m") == 30 * 60000);
    CHECK(*parse_duration_ms("1h30m") == 90 * 60000);
    CHECK(*parse_duration_ms("500ms") == 500);
    CHECK(*parse_duration_ms("90") == 90000);
    CHECK(*parse_duration_ms("2d") == 2 * 86400000ull);
    CHECK_FALSE(parse_duration_ms("10 minutes"));
    CHECK_FALSE(parse_duration_ms(""));
    CHECK(format_duration_ms(1000) == "1s");
    CHECK(format_duration_ms(300) == "300ms");
    CHECK(format_duration_ms(90 * 60000) == "1h30m");
    CHECK(format_duration_ms(0) == "0s");
    for (uint64_t ms : {1ull, 999ull, 1001ull, 61500ull, 2 * 86400000ull + 5})
        CHECK(*parse_duration_ms(format_duration_ms(ms)) == ms);
}

TEST_CASE("sandbox: users, ids, env") {
    auto u = parse_user("1000:2000");
    REQUIRE(u);
    CHECK(u->uid == 1000);
    CHECK(u->gid == 2000);
    CHECK(parse_user("7")->gid == 7);
    CHECK_FALSE(parse_user("root"));
    CHECK_FALSE(parse_user("1:"));
    CHECK(check_id("abc-1.2_x"));
    for (const char* bad : {"", ".hidden", "-x", "a/b", "..", "a b"}) CHECK_FALSE(check_id(bad));
    CHECK(check_id(std::string(64, 'a')));
    CHECK_FALSE(check_id(std::string(65, 'a')));
    CHECK(check_id(random_hex(kSandboxIdBytes)));
    CHECK(random_hex(kSandboxIdBytes).size() == 12);
    CHECK(random_hex(kSandboxIdBytes) != random_hex(kSandboxIdBytes));
    // One generator: hex of the bytes asked for.
    CHECK(dsec::random_hex(12).size() == 24);
    CHECK(dsec::random_hex(12).find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(check_env({"A=1", "B="}, "--env"));
    CHECK_FALSE(check_env({"A"}, "--env"));
    CHECK_FALSE(check_env({"=1"}, "--env"));
}

TEST_CASE("sandbox: result record shape") {
    ExecResult r;
    r.exit_code = 137;
    r.signal = 9;
    r.out = "x";
    r.timed_out = true;
    auto j = r.to_record("s1");
    CHECK(j["type"] == "result");
    CHECK(j["id"] == "s1");
    CHECK(j["exit_code"] == 137);
    CHECK(j["signal"] == 9);
    CHECK(j["stdout"] == "x");
    CHECK(j["stdout_truncated"] == false);
    CHECK(j["timed_out"] == true);
    CHECK_FALSE(j.contains("note"));
    ExecResult ok;
    CHECK(ok.to_record("s")["signal"].is_null());
}

TEST_CASE("--user names: the form is checked up front, ids are found by name in passwd and group text") {
    CHECK(parse::check_user("1000"));
    CHECK(parse::check_user("1000:100"));
    CHECK(parse::check_user("alice"));
    CHECK(parse::check_user("alice:staff"));
    CHECK(parse::check_user("_apt"));
    CHECK(parse::check_user("1000:staff"));
    for (const char* bad : {"", "Alice", "al ice", "alice:", ":staff", "a/b", "alice:st:aff", "-x",
                            "averyveryveryveryveryverylongname1"})
        CHECK_MESSAGE(!parse::check_user(bad), bad);
    CHECK(parse::is_numeric_user("0:0"));
    CHECK(!parse::is_numeric_user("root"));

    std::string passwd = "root:x:0:0:root:/root:/bin/sh\nalice:x:1234:2345::/home/alice:/bin/sh\n"
                         "broken:x:notanumber:1\nshort:x\n# alice2:x:9:9\nbob:x:77\n";
    auto alice = sandbox::find_entry(passwd, "alice");
    REQUIRE(alice);
    CHECK(alice->id == 1234);
    CHECK(alice->gid == 2345);
    CHECK(!sandbox::find_entry(passwd, "broken"));
    CHECK(!sandbox::find_entry(passwd, "short"));
    CHECK(!sandbox::find_entry(passwd, "alic"));
    CHECK(!sandbox::find_entry(passwd, "nobody"));
    auto bob = sandbox::find_entry(passwd, "bob");  // group-file form: three fields
    REQUIRE(bob);
    CHECK(bob->id == 77);
}

TEST_CASE("sandbox: where exec looks for a command, as execvp would, in the sandbox's PATH") {
    using V = std::vector<std::string>;
    CHECK(exec_candidates("ls", {"HOME=/root", "PATH=/usr/bin:/bin"}) == V{"/usr/bin/ls", "/bin/ls"});
    CHECK(exec_candidates("./run.sh", {"PATH=/bin"}) == V{"./run.sh"});
    CHECK(exec_candidates("/opt/tool", {"PATH=/bin"}) == V{"/opt/tool"});
    // No PATH: glibc's default; an empty entry (leading, trailing or doubled) is the cwd.
    CHECK(exec_candidates("sh", {"HOME=/root"}) == V{"/bin/sh", "/usr/bin/sh"});
    CHECK(exec_candidates("x", {"PATH=:/bin:"}) == V{"x", "/bin/x", "x"});
    CHECK(exec_candidates("", {"PATH=/bin"}).empty());
    // The first PATH= counts, as for getenv.
    CHECK(exec_candidates("y", {"PATH=/a", "PATH=/b"}) == V{"/a/y"});
}

TEST_CASE("sandbox: remains dropped unfinished are finished; moved, they go with the move") {
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-remains.");
    REQUIRE(tmp);
    auto tree = [&](const std::string& name) {
        std::string dir = tmp->path() + "/" + name;
        REQUIRE(fs::mkdir_p(dir + "/upper/a", 0700));
        REQUIRE(fs::atomic_write(dir + "/upper/a/f", "x"));
        return dir;
    };
    std::string one = tree("one"), two = tree("two"), three = tree("three");
    {
        Remains r;
        r.trees.push_back(one);
    }
    CHECK_FALSE(fs::exists(one));
    Remains outer;
    {
        Remains inner;
        inner.trees.push_back(two);
        outer = std::move(inner);
    }
    CHECK(fs::exists(two));  // the move took it: the moved-from one held nothing
    Remains other;
    other.trees.push_back(three);
    outer = std::move(other);  // what outer held is finished first
    CHECK_FALSE(fs::exists(two));
    CHECK(fs::exists(three));
    Remains taken(std::move(outer));
    CHECK_FALSE(outer);
    CHECK(taken.finish());
    CHECK_FALSE(fs::exists(three));
}
