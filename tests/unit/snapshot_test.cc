#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fstream>

#include "dsec/ns/idrange.h"
#include "dsec/snapshot/fork.h"
#include "dsec/snapshot/pack.h"
#include "dsec/snapshot/scrub.h"
#include "dsec/snapshot/snapshot.h"
#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"

using namespace dsec;
using nlohmann::json;

TEST_CASE("scrub paths: the policy's \"scrub\" array, clean and sorted; other keys ignored") {
    auto p = snapshot::scrub_paths(json{{"scrub", {"/srv/answers/", "//tmp//notes", "/srv/answers"}},
                                        {"network", {{"allow", json::array()}}}});
    REQUIRE(p);
    CHECK(*p == std::vector<std::string>{"srv/answers", "tmp/notes"});
    CHECK(snapshot::scrub_paths(json{{"hidden", {"/x"}}}).value().empty());
    for (json bad : {json{{"scrub", "/x"}}, json{{"scrub", {"relative"}}}, json{{"scrub", {"/"}}},
                     json{{"scrub", {"/a/../.."}}}, json{{"scrub", {1}}}, json::array()}) {
        auto r = snapshot::scrub_paths(bad);
        REQUIRE(!r);
        CHECK(r.error().code == Code::bad_input);
    }
}

TEST_CASE("a scrubbed path covers what lies below it, not its namesakes") {
    std::vector<std::string> scrub = {"srv/answers", "x"};
    CHECK(snapshot::is_scrubbed("srv/answers", scrub));
    CHECK(snapshot::is_scrubbed("srv/answers/a/b", scrub));
    CHECK(snapshot::is_scrubbed("x/y", scrub));
    CHECK(!snapshot::is_scrubbed("srv/answers2", scrub));
    CHECK(!snapshot::is_scrubbed("srv", scrub));
    CHECK(!snapshot::is_scrubbed("xy", scrub));
}

TEST_CASE("fork options come back from a sandbox's state") {
    json state = {{"id", "s1"},
                  {"limits", {{"memory", 1 << 20}, {"cpus", 0.5}, {"pids", 50}, {"disk", 4096}, {"tmp", 8192}}},
                  {"env", {"A=1"}},
                  {"workdir", "/w"},
                  {"user", "1000"},
                  {"labels", {{"team", "a"}}},
                  {"ttl", 1.5},
                  {"idle_ttl", nullptr},
                  {"policy", "/p.json"},
                  {"security", {{"userns", "private"}, {"caps", json::array()}, {"seccomp", "default"}}}};
    auto o = snapshot::options_like(state);
    if (!o && o.error().code == Code::not_found) return;  // no dsec-init beside the test binary
    REQUIRE(o);
    CHECK(o->limits.memory == 1 << 20);
    CHECK(o->limits.cpus == 0.5);
    CHECK(o->limits.pids == 50);
    CHECK(o->disk == 4096);
    CHECK(o->tmp_size == 8192);
    CHECK(o->env == std::vector<std::string>{"A=1"});
    CHECK(o->workdir == "/w");
    CHECK(o->labels.at("team") == "a");
    CHECK(o->ttl_ms == 1500);
    CHECK(o->idle_ttl_ms == 0);
    CHECK(o->policy == "/p.json");
    CHECK(o->id.empty());
    CHECK(!snapshot::options_like(json{{"id", "s2"}, {"limits", {{"memory", "big"}}}, {"security", json::object()}}));
}

namespace {
void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
struct stat lstat_of(const std::string& path) {
    struct stat st {};
    ::lstat(path.c_str(), &st);
    return st;
}
}  // namespace

TEST_CASE("an upper is staged as a layer: whiteouts, opaque dirs, links, holes; owners as inside") {
    if (::geteuid() != 0) return;  // owners, devices and trusted.* need root
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-snap.");
    REQUIRE(tmp);
    std::string src = tmp->path() + "/upper", dst = tmp->path() + "/tree";
    REQUIRE(::mkdir(src.c_str(), 0755) == 0);
    REQUIRE(::mkdir(dst.c_str(), 0755) == 0);
    write(src + "/file", "hello");
    // Owners as the sandbox's idmapped upper shows them: host ids of a rotated range
    // (5 and 6 inside are 3 * 65536 + 4 + 5 and + 6 on the host).
    const ns::IdMap ids = ns::sandbox_id_map(3 * 65536, 65536);
    REQUIRE(::chown((src + "/file").c_str(), *ids.outside(5), *ids.outside(6)) == 0);
    REQUIRE(::link((src + "/file").c_str(), (src + "/link").c_str()) == 0);
    REQUIRE(::symlink("file", (src + "/sym").c_str()) == 0);
    REQUIRE(::mknod((src + "/gone").c_str(), S_IFCHR | 0, makedev(0, 0)) == 0);
    REQUIRE(::mknod((src + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    write(src + "/suid", "x");
    REQUIRE(::chmod((src + "/suid").c_str(), 04755) == 0);
    REQUIRE(::mkdir((src + "/opq").c_str(), 0750) == 0);
    REQUIRE(::setxattr((src + "/opq").c_str(), "user.overlay.opaque", "y", 1, 0) == 0);
    REQUIRE(::setxattr((src + "/opq").c_str(), "user.overlay.origin", "zz", 2, 0) == 0);
    REQUIRE(::setxattr((src + "/file").c_str(), "user.note", "kept", 4, 0) == 0);
    REQUIRE(::mkdir((src + "/secret").c_str(), 0755) == 0);
    write(src + "/secret/answer", "42");
    {
        Fd f(::open((src + "/sparse").c_str(), O_WRONLY | O_CREAT, 0644));
        REQUIRE(::pwrite(f.get(), "end", 3, 10 << 20) == 3);
    }

    snapshot::PackOptions opts;
    opts.inside = [&ids](uint32_t host) { return ids.inside(host); };
    opts.scrub = {"etc/shadow", "secret"};
    // In the layer below: /etc/shadow (the upper has it too) and /srv/key (the upper has no /srv).
    opts.scrub.push_back("srv/key");  // the list is sorted, as scrub_paths() gives it
    opts.lower_stat = [](const std::string& p) -> std::optional<struct stat> {
        struct stat st {};
        st.st_mode = (p == "srv" || p == "etc" ? S_IFDIR | 0711 : S_IFREG | 0600);
        st.st_uid = 7;
        if (p == "etc/shadow" || p == "srv" || p == "srv/key" || p == "etc") return st;
        return std::nullopt;
    };
    snapshot::PackStats stats;
    Fd upper(::open(src.c_str(), O_RDONLY | O_DIRECTORY));
    REQUIRE(::mkdir((src + "/etc").c_str(), 0755) == 0);
    write(src + "/etc/shadow", "root:x");
    auto r = snapshot::copy_upper(upper.get(), dst, opts, stats);
    REQUIRE_MESSAGE(r, (r ? "" : r.error().describe()));

    CHECK(fs::read_file(dst + "/file").value() == "hello");
    auto file = lstat_of(dst + "/file");
    CHECK(file.st_uid == 5);
    CHECK(file.st_gid == 6);
    CHECK(file.st_nlink == 2);
    CHECK(file.st_ino == lstat_of(dst + "/link").st_ino);
    CHECK(S_ISLNK(lstat_of(dst + "/sym").st_mode));
    auto gone = lstat_of(dst + "/gone");
    CHECK((S_ISCHR(gone.st_mode) && gone.st_rdev == makedev(0, 0)));
    CHECK(!fs::exists(dst + "/null"));  // a device: neutralised
    CHECK((lstat_of(dst + "/suid").st_mode & 07777) == 0755);
    char v[8] = {};
    CHECK(::getxattr((dst + "/opq").c_str(), "user.overlay.opaque", v, sizeof v) == 1);
    CHECK(::getxattr((dst + "/opq").c_str(), "trusted.overlay.opaque", v, sizeof v) == 1);
    CHECK(::getxattr((dst + "/opq").c_str(), "user.overlay.origin", v, sizeof v) < 0);
    CHECK(::getxattr((dst + "/file").c_str(), "user.note", v, sizeof v) == 4);
    CHECK((lstat_of(dst + "/opq").st_mode & 07777) == 0750);
    CHECK(!fs::exists(dst + "/secret"));
    auto shadow = lstat_of(dst + "/etc/shadow");  // scrubbed, and hidden from the layer below
    CHECK((S_ISCHR(shadow.st_mode) && shadow.st_rdev == makedev(0, 0)));
    auto sparse = lstat_of(dst + "/sparse");
    CHECK(sparse.st_size == (10 << 20) + 3);
    CHECK(sparse.st_blocks < 64);
    auto key = lstat_of(dst + "/srv/key");
    CHECK((S_ISCHR(key.st_mode) && key.st_rdev == makedev(0, 0)));
    auto srv = lstat_of(dst + "/srv");
    CHECK(((srv.st_mode & 07777) == 0711 && srv.st_uid == 7));
    CHECK(stats.scrubbed == std::vector<std::string>{"etc/shadow", "secret", "srv/key"});
    CHECK(stats.neutralized_total == 2);  // the device and the setuid bit
}

TEST_CASE("a snapshot's parents are its sandbox's layers, base first") {
    json state = {{"id", "s"},
                  {"rootfs", {{"layers", {{{"digest", "sha256:aa"}, {"name", "base"}}, {{"digest", "sha256:bb"}}}}}}};
    CHECK(snapshot::parents_of(state).value() == std::vector<std::string>{"sha256:aa", "sha256:bb"});
    auto none = snapshot::parents_of(json{{"id", "s"}, {"rootfs", {{"layers", json::array()}}}});
    REQUIRE(!none);
    CHECK(none.error().code == Code::bad_input);
    CHECK(!snapshot::parents_of(json{{"id", "s"}}));
}
