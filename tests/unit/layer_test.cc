#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "dsec/layer/build.h"
#include "dsec/layer/store.h"
#include "dsec/sys/fs.h"

using namespace dsec;

TEST_CASE("layer names: the safe set only") {
    CHECK(layer::check_name("python3.12"));
    CHECK(layer::check_name("task-4711_b"));
    CHECK(!layer::check_name(""));
    CHECK(!layer::check_name("../etc"));
    CHECK(!layer::check_name(".hidden"));
    CHECK(!layer::check_name("a/b"));
    CHECK(!layer::check_name(std::string(129, 'a')));
    CHECK(!layer::check_name(std::string(64, 'a')));
    CHECK(!layer::check_name("tmp"));
}

TEST_CASE("layer metadata round-trips through its record") {
    layer::Layer l;
    l.digest = "sha256:" + std::string(64, 'a');
    l.name = "base";
    l.labels = {{"os", "busybox"}};
    l.size = 4096;
    l.files = 12;
    l.compression = "lz4";
    l.parents = {"sha256:" + std::string(64, 'b')};
    l.config = layer::ImageConfig{{"PATH=/bin"}, "/work", {"/bin/sh"}, {}, "1000"};
    auto rec = l.to_record();
    CHECK(rec["type"] == "layer");
    auto back = layer::Layer::from_json(rec);
    REQUIRE(back);
    CHECK(back->digest == l.digest);
    CHECK(back->labels == l.labels);
    CHECK(back->parents == l.parents);
    REQUIRE(back->config);
    CHECK(back->config->workdir == "/work");
    CHECK(back->hex() == std::string(64, 'a'));
}

TEST_CASE("layer metadata with a bad digest is refused") {
    auto bad = layer::Layer::from_json({{"digest", "md5:abc"}});
    REQUIRE(!bad);
    CHECK(bad.error().code == Code::bad_input);
    CHECK(!layer::Layer::from_json({{"name", "x"}}));
}

TEST_CASE("layer metadata whose size or file count is not a whole number is refused") {
    const std::string digest = "sha256:" + std::string(64, 'a');
    for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
             {"size", 4.09611e+48}, {"size", 1.5}, {"files", -1}, {"files", "12"}}) {
        auto bad = layer::Layer::from_json({{"digest", digest}, {key, value}});
        REQUIRE(!bad);
        CHECK(bad.error().code == Code::bad_input);
        CHECK(bad.error().field == key);
    }
    auto good = layer::Layer::from_json({{"digest", digest}, {"size", 4096}, {"files", 3}});
    REQUIRE(good);
    CHECK(good->size == 4096);
    CHECK(good->files == 3);
}

TEST_CASE("EROFS images: the same tree gives the same bytes, and files keep their mtimes") {
    char tmpl[] = "/tmp/dsec-unit-erofs.XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    std::string dir = tmpl, tree = dir + "/tree";
    REQUIRE(::mkdir(tree.c_str(), 0755) == 0);
    REQUIRE(fs::atomic_write(tree + "/a.py", "print(1)\n"));
    struct timespec times[2] = {{1234567890, 0}, {1234567890, 0}};
    REQUIRE(::utimensat(AT_FDCWD, (tree + "/a.py").c_str(), times, 0) == 0);
    // Two builds at different moments: mkfs.erofs stamps each with its own build time.
    REQUIRE(layer::make_image(tree, dir + "/1.img", "lz4"));
    REQUIRE(layer::make_image(tree, dir + "/2.img", "lz4"));
    auto one = fs::read_file(dir + "/1.img"), two = fs::read_file(dir + "/2.img");
    REQUIRE(one);
    REQUIRE(two);
    CHECK(*one == *two);
    // dump.erofs verifies the superblock checksum and shows the file's own mtime.
    std::string cmd = "TZ=UTC dump.erofs --path=/a.py " + dir + "/1.img 2>&1";
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
        char buf[512];
        while (size_t n = ::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
        ::pclose(p);
    }
    CHECK(out.find("2009-02-13 23:31:30") != std::string::npos);
    CHECK(!layer::pin_build_time(tree + "/a.py"));  // not an image: refused, untouched
    CHECK(*fs::read_file(tree + "/a.py") == "print(1)\n");
    std::filesystem::remove_all(dir);
}

TEST_CASE("rfc3339 formats UTC seconds, with no time zone involved") {
    CHECK(layer::rfc3339(0) == "1970-01-01T00:00:00Z");
    CHECK(layer::rfc3339(1796431606) == "2026-12-05T00:46:46Z");
    CHECK(layer::rfc3339(951825599) == "2000-02-29T11:59:59Z");
    CHECK(layer::now_rfc3339().size() == 20);
    CHECK(layer::rfc3339_ms(951825599123) == "2000-02-29T11:59:59.123Z");
    CHECK(layer::rfc3339_ms(-1) == "1969-12-31T23:59:59.999Z");
    CHECK(layer::rfc3339_ms(4102444800000, false) == "2100-01-01T00:00:00Z");
}
