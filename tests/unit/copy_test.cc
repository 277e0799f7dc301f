#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "dsec/copy/disk.h"
#include "dsec/copy/guard.h"
#include "dsec/copy/place.h"
#include "dsec/copy/tar.h"
#include "dsec/copy/walk.h"
#include "dsec/sys/fs.h"

using namespace dsec;
using copy::Entry;
using copy::Kind;

namespace {
// Remembers what reached it.
struct Recorder : copy::Sink {
    std::vector<Entry> entries;
    std::string bytes;
    bool committed = false, abandoned = false;
    Status add(const Entry& e) override {
        entries.push_back(e);
        return {};
    }
    Status data(const char* b, size_t n) override {
        bytes.append(b, n);
        return {};
    }
    Status end_file() override { return {}; }
    Status commit() override {
        committed = true;
        return {};
    }
    void abandon() override { abandoned = true; }
};

Entry file(std::string path, uint64_t size, unsigned mode = 0644) {
    Entry e;
    e.path = std::move(path);
    e.kind = Kind::file;
    e.size = size;
    e.mode = mode;
    e.uid = 1234;
    e.gid = 2345;
    return e;
}

Entry of_kind(std::string path, Kind kind, std::string target = {}) {
    Entry e = file(std::move(path), 0);
    e.kind = kind;
    e.target = std::move(target);
    return e;
}

struct TempTree {
    std::string path;
    TempTree() {
        char tmpl[] = "/tmp/dsec-copy-test.XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempTree() { (void)fs::remove_tree(path); }
    Fd fd() const { return Fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)); }
};
}  // namespace

TEST_CASE("guard: paths are cleaned, renamed below the top, and never leave it") {
    Recorder r;
    copy::Guard g(r, {}, {0, true, "top"});
    CHECK(g.add(of_kind("./src/", Kind::dir)));
    CHECK(g.add(of_kind("./", Kind::dir)));  // the destination itself: dropped
    CHECK(g.add(of_kind("src//a/./b", Kind::dir)));
    REQUIRE(r.entries.size() == 2);
    CHECK(r.entries[0].path == "top");
    CHECK(r.entries[1].path == "top/a/b");
    for (const char* bad : {"../x", "src/../../x", "/etc/passwd"}) {
        auto s = g.add(of_kind(bad, Kind::dir));
        REQUIRE(!s);
        CHECK(s.error().code == Code::bad_input);
    }
}

TEST_CASE("guard: set-id and sticky bits stripped and noted, owners replaced when asked") {
    Recorder r;
    copy::Guard g(r, {}, {07000, false, ""});
    REQUIRE(g.add(file("t/su", 0, 06755)));
    REQUIRE(g.end_file());
    REQUIRE(g.add(of_kind("t/tmp", Kind::dir)));
    CHECK(r.entries[0].mode == 0755);
    CHECK(r.entries[0].uid == ::geteuid());
    CHECK(r.entries[0].gid == ::getegid());
    CHECK(g.stats().neutralized.total == 2);
    CHECK(g.stats().neutralized.listed[0].what == "setuid");
    CHECK(g.stats().neutralized.listed[1].what == "setgid");

    Recorder kept;
    copy::Guard in(kept, {}, {06000, true, ""});
    Entry sticky = of_kind("t", Kind::dir);
    sticky.mode = 01777;
    REQUIRE(in.add(sticky));
    CHECK(kept.entries[0].mode == 01777);  // only set-id bits go into a sandbox
    CHECK(kept.entries[0].uid == 1234);
}

TEST_CASE("guard: hard links only to files the same stream wrote") {
    Recorder r;
    copy::Guard g(r, {}, {0, true, "top"});
    REQUIRE(g.add(of_kind("src", Kind::dir)));
    REQUIRE(g.add(file("src/a", 0)));
    REQUIRE(g.end_file());
    CHECK(g.add(of_kind("src/b", Kind::hardlink, "src/a")));
    CHECK(r.entries.back().target == "top/a");
    for (const char* bad : {"etc/passwd", "../x", "src", "src/nope"}) {
        auto s = g.add(of_kind("src/c", Kind::hardlink, bad));
        REQUIRE(!s);
        CHECK(s.error().code == Code::bad_input);
    }
}

TEST_CASE("guard: caps on bytes and entries, skipped entries counted") {
    Recorder r;
    copy::Guard g(r, {10, 3}, {});
    REQUIRE(g.add(file("a", 6)));
    REQUIRE(g.data("123456", 6));
    REQUIRE(g.end_file());
    CHECK(g.skip("f", "fifo"));
    CHECK(g.stats().skipped.total == 1);
    REQUIRE(g.add(of_kind("d", Kind::dir)));
    auto many = g.add(of_kind("e", Kind::dir));
    REQUIRE(!many);
    CHECK(many.error().code == Code::too_large);
    CHECK(g.stats().entries == 2);
    CHECK(g.stats().bytes == 6);

    copy::Guard small(r, {10, 3}, {});
    REQUIRE(small.add(file("a", 6)));
    REQUIRE(small.data("123456", 6));
    REQUIRE(small.end_file());
    auto big = small.add(file("b", 5));
    REQUIRE(!big);
    CHECK(big.error().code == Code::too_large);
}

TEST_CASE("guard: a file gets exactly its size") {
    Recorder r;
    copy::Guard g(r, {}, {});
    REQUIRE(g.add(file("a", 3)));
    CHECK(!g.data("1234", 4));
    REQUIRE(g.data("12", 2));
    CHECK(!g.end_file());
}

TEST_CASE("stats survive a trip through the copy record") {
    copy::Stats s;
    s.entries = 4;
    s.bytes = 6;
    s.skipped.add("a/f", "fifo");
    s.neutralized.add("a/su", "setuid");
    s.neutralized.total = 7;
    nlohmann::json rec;
    s.annotate(rec);
    auto back = copy::Stats::from_record(rec);
    CHECK(back.entries == 4);
    CHECK(back.bytes == 6);
    CHECK(back.skipped.listed[0].what == "fifo");
    CHECK(back.neutralized.total == 7);
    CHECK(copy::Stats::from_record(nlohmann::json::array()).entries == 0);
    CHECK(copy::Stats::from_record({{"skipped", "junk"}, {"entries", -1}}).skipped.total == 0);
}

TEST_CASE("errors pass between processes whole") {
    Error e = errno_error(ENOENT, "openat2", "id:/x");
    e.message = "context";
    Error back = Error::from_fields(e.to_fields());
    CHECK(back.code == Code::not_found);
    CHECK(back.err == ENOENT);
    CHECK(back.describe() == e.describe());
    CHECK(Error::from_fields("junk").code == Code::io);
}

TEST_CASE("disk writer: never writes through a symlink, removes what it made when abandoned") {
    TempTree t;
    REQUIRE(::mkdir((t.path + "/dst").c_str(), 0755) == 0);
    REQUIRE(::symlink("/etc", (t.path + "/dst/link").c_str()) == 0);
    {
        copy::DiskWriter w(Fd(::open((t.path + "/dst").c_str(), O_PATH | O_DIRECTORY)), "dst", false);
        auto s = w.add(file("link/passwd", 0));
        REQUIRE(!s);
        CHECK(s.error().code == Code::bad_input);
        // A symlink as the leaf is replaced, not followed.
        REQUIRE(w.add(of_kind("link", Kind::dir)));
        REQUIRE(w.add(file("link/f", 2)));
        REQUIRE(w.data("hi", 2));
        REQUIRE(w.end_file());
        struct stat st;
        REQUIRE(::lstat((t.path + "/dst/link/f").c_str(), &st) == 0);
        w.abandon();
        CHECK(::lstat((t.path + "/dst/link").c_str(), &st) < 0);
        CHECK(::lstat((t.path + "/dst").c_str(), &st) == 0);
    }
}

TEST_CASE("a tree through a tar stream and back: kinds, modes, links; FIFOs skipped") {
    TempTree t;
    std::string src = t.path + "/src";
    REQUIRE(::mkdir(src.c_str(), 0750) == 0);
    REQUIRE(fs::atomic_write(src + "/a", "hello", 0640));
    REQUIRE(::link((src + "/a").c_str(), (src + "/b").c_str()) == 0);
    REQUIRE(::symlink("/etc/passwd", (src + "/l").c_str()) == 0);
    REQUIRE(::mkfifo((src + "/p").c_str(), 0600) == 0);
    REQUIRE(::mkdir((t.path + "/out").c_str(), 0755) == 0);

    std::string tar_path = t.path + "/s.tar";
    {
        Fd tar(::open(tar_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
        copy::TarWriter w(tar.get(), "s.tar");
        copy::Guard g(w, {}, {});
        auto from = copy::source({}, src);
        REQUIRE(from);
        REQUIRE(copy::walk(*from, "src", g));
        REQUIRE(g.commit());
        CHECK(g.stats().skipped.total == 1);
        CHECK(g.stats().skipped.listed[0].what == "fifo");
        CHECK(g.stats().entries == 4);
    }
    Fd tar(::open(tar_path.c_str(), O_RDONLY | O_CLOEXEC));
    copy::DiskWriter d(Fd(::open((t.path + "/out").c_str(), O_PATH | O_DIRECTORY)), "out", false);
    copy::Guard g(d, {}, {07000, false, "copy"});
    REQUIRE(copy::read_tar(tar.get(), "s.tar", g));
    REQUIRE(g.commit());
    struct stat a, b, l, top;
    REQUIRE(::lstat((t.path + "/out/copy/a").c_str(), &a) == 0);
    REQUIRE(::lstat((t.path + "/out/copy/b").c_str(), &b) == 0);
    REQUIRE(::lstat((t.path + "/out/copy/l").c_str(), &l) == 0);
    REQUIRE(::lstat((t.path + "/out/copy").c_str(), &top) == 0);
    CHECK(a.st_ino == b.st_ino);
    CHECK((a.st_mode & 07777) == 0640);
    CHECK(S_ISLNK(l.st_mode));
    CHECK((top.st_mode & 07777) == 0750);
    CHECK(fs::read_file(t.path + "/out/copy/a").value() == "hello");
}

TEST_CASE("landing: inside an existing directory, else as the name given") {
    TempTree t;
    REQUIRE(::mkdir((t.path + "/d").c_str(), 0755) == 0);
    auto in = copy::landing({}, t.path + "/d", "src", true);
    REQUIRE(in);
    CHECK(in->name == "src");
    auto as = copy::landing({}, t.path + "/d/new", "src", true);
    REQUIRE(as);
    CHECK(as->name == "new");
    CHECK(!copy::landing({}, t.path + "/none/new", "src", true));
    CHECK(!copy::landing({}, t.path + "/d", "", true));  // "/" copied into a directory
    CHECK(copy::basename_of("/a/b//") == "b");
    CHECK(copy::basename_of("/") == "");
}
