// A layer store changed behind dsec's back: metadata that lies about its digest or is a
// symlink, a name that holds a path, and images that are symlinks, truncated, flipped
// or not EROFS at all. Each is refused with "corrupt" before anything is mounted.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "dsec/layer/build.h"
#include "dsec/layer/store.h"
#include "dsec/mount/image_check.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/sha256.h"

using namespace dsec;

namespace {
const std::string kHexA(64, 'a');
const std::string kHexB(64, 'b');

// A store with one layer whose metadata and image are plain files (no real image).
struct FakeStore {
    fs::TempDir tmp = *fs::TempDir::make("/tmp", "dsec-unit-tamper.");
    std::string dir = tmp.path() + "/layers";
    layer::Store store{dir};
    FakeStore() {
        REQUIRE(store.init());
        REQUIRE(fs::atomic_write(dir + "/" + kHexA + ".erofs", "image"));
        REQUIRE(fs::atomic_write(dir + "/" + kHexA + ".json", R"({"digest":"sha256:)" + kHexA + R"(","name":"a"})"));
        REQUIRE(fs::atomic_write(dir + "/names/a", "sha256:" + kHexA + "\n"));
    }
};

// The 128 superblock bytes of an image with `blocks` blocks of 4 KiB.
std::string superblock(uint32_t blocks, uint32_t magic = 0xE0F5E1E2, uint8_t bits = 12) {
    std::string sb(mount::kErofsSuperSize, '\0');
    for (int i = 0; i < 4; i++) sb[i] = char(magic >> (8 * i));
    sb[12] = char(bits);
    for (int i = 0; i < 4; i++) sb[36 + i] = char(blocks >> (8 * i));
    return sb;
}
}  // namespace

TEST_CASE("store: metadata names the digest it is stored under") {
    FakeStore s;
    REQUIRE(s.store.resolve("a"));
    // Another layer's metadata copied (or pointed) under this digest.
    REQUIRE(fs::atomic_write(s.dir + "/" + kHexA + ".json", R"({"digest":"sha256:)" + kHexB + R"("})"));
    REQUIRE(fs::atomic_write(s.dir + "/" + kHexB + ".erofs", "other"));
    auto l = s.store.resolve("a");
    REQUIRE(!l);
    CHECK(l.error().code == Code::corrupt);
    CHECK(l.error().message.find("not the digest it is stored under") != std::string::npos);
}

TEST_CASE("store: a metadata symlink is refused") {
    FakeStore s;
    std::string meta = s.dir + "/" + kHexA + ".json";
    REQUIRE(fs::atomic_write(s.tmp.path() + "/elsewhere.json", *fs::read_file(meta)));
    REQUIRE(::unlink(meta.c_str()) == 0);
    REQUIRE(::symlink((s.tmp.path() + "/elsewhere.json").c_str(), meta.c_str()) == 0);
    auto l = s.store.resolve("a");
    REQUIRE(!l);
    CHECK(l.error().code == Code::corrupt);
}

TEST_CASE("store: a name that holds a path is refused, not followed") {
    FakeStore s;
    REQUIRE(fs::atomic_write(s.tmp.path() + "/x.json", R"({"digest":"sha256:)" + kHexA + R"("})"));
    REQUIRE(fs::atomic_write(s.dir + "/names/a", "../x\n"));
    auto l = s.store.resolve("a");
    REQUIRE(!l);
    CHECK(l.error().code == Code::corrupt);
}

TEST_CASE("EROFS header: magic, block size and blocks within the file") {
    CHECK(mount::check_erofs_header(superblock(3), 3 * 4096, "i"));
    CHECK(mount::check_erofs_header(superblock(3), 4 * 4096, "i"));
    auto truncated = mount::check_erofs_header(superblock(3), 2 * 4096, "i");
    REQUIRE(!truncated);
    CHECK(truncated.error().code == Code::corrupt);
    CHECK(truncated.error().message.find("truncated") != std::string::npos);
    CHECK(!mount::check_erofs_header(superblock(3, 0x12345678), 3 * 4096, "i"));
    CHECK(!mount::check_erofs_header(superblock(3, 0xE0F5E1E2, 40), 3 * 4096, "i"));
    CHECK(!mount::check_erofs_header(superblock(0), 1100, "i"));               // file too short
    CHECK(!mount::check_erofs_header(superblock(1).substr(0, 20), 4096, "i"));  // short read
}

TEST_CASE("image checks: symlink, size, header, and the digest once per file") {
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-image.");
    REQUIRE(tmp);
    std::string tree = tmp->path() + "/tree", built = tmp->path() + "/built.erofs";
    REQUIRE(fs::mkdir_p(tree));
    REQUIRE(fs::atomic_write(tree + "/f", std::string(10000, 'x')));
    REQUIRE(layer::make_image(tree, built, "none"));
    auto hex = sha256_file(built);
    REQUIRE(hex);
    layer::Store store(tmp->path() + "/layers");
    REQUIRE(store.init());
    layer::Layer l;
    l.digest = "sha256:" + *hex;
    std::string image = store.image_path(l.digest);
    REQUIRE(::rename(built.c_str(), image.c_str()) == 0);
    struct stat st;
    REQUIRE(::stat(image.c_str(), &st) == 0);
    l.size = uint64_t(st.st_size);
    dsec::Paths paths{tmp->path(), tmp->path() + "/run", ""};

    REQUIRE(mount::open_checked_image(paths, store, l, true));
    // The whole-image hash is recorded with the file's identity.
    auto seen = fs::read_file(mount::verified_record_path(paths, l.digest));
    REQUIRE(seen);
    CHECK(*seen == mount::file_identity(st));

    SUBCASE("a byte flipped in place is found by --verify (the change shows in ctime)") {
        std::string bytes = *fs::read_file(image);
        bytes[bytes.size() - 100] ^= 1;
        Fd fd(::open(image.c_str(), O_WRONLY));
        REQUIRE(::pwrite(fd.get(), bytes.data() + bytes.size() - 100, 1, off_t(bytes.size() - 100)) == 1);
        CHECK(mount::open_checked_image(paths, store, l, false));  // size and header still hold
        auto r = mount::open_checked_image(paths, store, l, true);
        REQUIRE(!r);
        CHECK(r.error().code == Code::corrupt);
        CHECK(r.error().message.find("digest mismatch") != std::string::npos);
    }
    SUBCASE("a truncated image") {
        REQUIRE(::truncate(image.c_str(), off_t(l.size / 2)) == 0);
        auto r = mount::open_checked_image(paths, store, l, false);
        REQUIRE(!r);
        CHECK(r.error().code == Code::corrupt);
        l.size = 0;  // metadata without a size: the superblock still says how long it is
        auto h = mount::open_checked_image(paths, store, l, false);
        REQUIRE(!h);
        CHECK(h.error().message.find("truncated") != std::string::npos);
    }
    SUBCASE("a symlink in place of the image") {
        std::string real = tmp->path() + "/real.erofs";
        REQUIRE(::rename(image.c_str(), real.c_str()) == 0);
        REQUIRE(::symlink(real.c_str(), image.c_str()) == 0);
        auto r = mount::open_checked_image(paths, store, l, false);
        REQUIRE(!r);
        CHECK(r.error().code == Code::corrupt);
        CHECK(r.error().message.find("symlink") != std::string::npos);
    }
    SUBCASE("not an EROFS image at all, of the recorded size") {
        REQUIRE(fs::atomic_write(image, std::string(l.size, 'z')));
        auto r = mount::open_checked_image(paths, store, l, false);
        REQUIRE(!r);
        CHECK(r.error().message.find("bad magic") != std::string::npos);
    }
}
