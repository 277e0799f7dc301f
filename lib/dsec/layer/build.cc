#include "dsec/layer/build.h"

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <array>
#include <cerrno>

#include "dsec/sys/proc.h"

namespace dsec::layer {

// All images share one UUID and build time so the same tree gives the same bytes.
constexpr const char* kFixedUuid = "00000000-0000-0000-0000-000000000000";

namespace {
// The EROFS superblock: at byte 1024, checksummed (crc32c, seed ~0, no final xor, with
// its own field zeroed) up to the end of the first block.
constexpr off_t kSuperOffset = 1024;
constexpr size_t kMagicAt = 0, kChecksumAt = 4, kBlockBitsAt = 12, kBuildTimeAt = 24, kBuildNsecAt = 32;
constexpr uint32_t kErofsMagic = 0xE0F5E1E2;

uint32_t crc32c(uint32_t crc, const unsigned char* p, size_t n) {
    static const auto table = [] {
        std::array<uint32_t, 256> t{};
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    while (n--) crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

uint32_t get32(const std::vector<unsigned char>& b, size_t at) {
    return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24;
}
void put32(std::vector<unsigned char>& b, size_t at, uint32_t v) {
    for (int i = 0; i < 4; i++) b[at + size_t(i)] = (v >> (8 * i)) & 0xff;
}
}  // namespace

Status pin_build_time(const std::string& image_file) {
    Fd fd(::open(image_file.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd) return fail(sys_error("open", image_file));
    std::vector<unsigned char> sb(64);
    if (::pread(fd.get(), sb.data(), sb.size(), kSuperOffset) != ssize_t(sb.size()) || get32(sb, kMagicAt) != kErofsMagic)
        return fail(make_error(Code::bad_input, "not an EROFS image", image_file));
    unsigned bits = sb[kBlockBitsAt];
    if (bits < 11 || bits > 16) return fail(make_error(Code::bad_input, "EROFS block size out of range", image_file));
    sb.resize((size_t(1) << bits) - size_t(kSuperOffset));
    if (::pread(fd.get(), sb.data(), sb.size(), kSuperOffset) != ssize_t(sb.size()))
        return fail(make_error(Code::bad_input, "EROFS image shorter than its first block", image_file));
    for (size_t i = 0; i < 8; i++) sb[kBuildTimeAt + i] = 0;
    put32(sb, kBuildNsecAt, 0);
    put32(sb, kChecksumAt, 0);
    put32(sb, kChecksumAt, crc32c(~0u, sb.data(), sb.size()));
    if (::pwrite(fd.get(), sb.data(), 40, kSuperOffset) != 40) return fail(sys_error("write", image_file));
    return {};
}

Status check_compression(const std::string& compression) {
    if (compression == "none" || compression == "lz4" || compression == "lz4hc") return {};
    return fail(make_error(Code::usage, "unknown compression \"" + compression + "\" (none, lz4, lz4hc)"));
}

namespace {
// Whether the filesystem that holds `file` has (next to) no room left: under 1 MiB free,
// where a helper's failed write is a full disk.
bool filesystem_full(const std::string& file) {
    auto slash = file.rfind('/');
    std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
    struct statvfs st;
    return ::statvfs(dir.c_str(), &st) == 0 && uint64_t(st.f_bavail) * st.f_frsize < (uint64_t(1) << 20);
}
}  // namespace

Status make_image(const std::string& tree, const std::string& image_file, const std::string& compression) {
    if (auto r = check_compression(compression); !r) return r;
    // Files keep their own mtimes (python's .pyc, make and rsync compare them); the one
    // timestamp of the build itself is pinned afterwards (-T would pin every file's).
    std::vector<std::string> argv = {"mkfs.erofs", "--quiet", "--preserve-mtime", std::string("-U") + kFixedUuid};
    if (compression != "none") argv.push_back("-z" + compression);
    argv.push_back(image_file);
    argv.push_back(tree);
    auto r = proc::run_checked(argv);
    if (!r) {
        // mkfs.erofs exits 1 whatever failed; a full disk is asked of the filesystem.
        if (filesystem_full(image_file)) {
            r.error().code = Code::no_space;
            r.error().err = ENOSPC;
        }
        return fail(std::move(r.error()).context("making EROFS image of " + tree));
    }
    return pin_build_time(image_file);
}

namespace {
thread_local uint64_t walk_count;
int count_one(const char*, const struct stat*, int, struct FTW*) {
    walk_count++;
    return 0;
}
}  // namespace

Result<uint64_t> count_entries(const std::string& tree) {
    walk_count = 0;
    if (::nftw(tree.c_str(), count_one, 64, FTW_PHYS) < 0) return fail(sys_error("walk", tree));
    return walk_count - 1;  // the root itself is not an entry
}

Result<Layer> build_tree(const Store& store, const std::string& tree, const BuildOptions& opts) {
    if (!opts.name.empty())
        if (auto r = check_name(opts.name); !r) return fail(r.error());
    struct stat st;
    if (::stat(tree.c_str(), &st) < 0) return fail(sys_error("stat", tree));
    if (!S_ISDIR(st.st_mode)) return fail(errno_error(ENOTDIR, "build", tree));

    auto stage = store.staging("build-");
    if (!stage) return fail(stage.error());
    return image_and_publish(store, tree, stage->path() + "/image.erofs", opts);
}

Result<Layer> image_and_publish(const Store& store, const std::string& tree, const std::string& image,
                                const BuildOptions& opts) {
    if (auto r = make_image(tree, image, opts.compression); !r) return fail(r.error());
    auto files = count_entries(tree);
    if (!files) return fail(files.error());

    Layer layer;
    layer.name = opts.name;
    layer.labels = opts.labels;
    layer.compression = opts.compression;
    layer.source = opts.source;
    layer.parents = opts.parents;
    layer.config = opts.config;
    layer.files = *files;
    return store.publish(image, std::move(layer));
}

}  // namespace dsec::layer
