#include "dsec/mount/image_check.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "dsec/sys/fs.h"
#include "dsec/sys/sha256.h"

namespace dsec::mount {

namespace {

constexpr uint32_t kErofsMagic = 0xE0F5E1E2;

uint32_t le32(std::string_view b, size_t off) {
    return uint32_t(uint8_t(b[off])) | uint32_t(uint8_t(b[off + 1])) << 8 | uint32_t(uint8_t(b[off + 2])) << 16 |
           uint32_t(uint8_t(b[off + 3])) << 24;
}

Error corrupt(const std::string& why, const std::string& path) { return make_error(Code::corrupt, why, path); }

// The whole-image digest, unless this node already hashed this very file.
Status verify_once(const Paths& paths, int fd, const struct stat& st, const layer::Layer& layer,
                   const std::string& image) {
    std::string record = verified_record_path(paths, layer.digest);
    std::string identity = file_identity(st);
    if (auto seen = fs::read_file(record); seen && *seen == identity) return {};
    auto hex = sha256_fd(fd, image);
    if (!hex) return fail(hex.error());
    if (*hex != layer.hex())
        return fail(corrupt("digest mismatch: image hashes to sha256:" + *hex + " (changed behind dsec's back)", image));
    // Only a cache: a node that cannot write it hashes again next time.
    if (fs::mkdir_p(paths.run + "/verified", 0700)) (void)fs::atomic_write(record, identity, 0600);
    return {};
}

}  // namespace

Result<ErofsHeader> check_erofs_header(std::string_view sb, uint64_t file_size, const std::string& path) {
    if (file_size < kErofsSuperOffset + kErofsSuperSize || sb.size() < kErofsSuperSize)
        return fail(corrupt("image is " + std::to_string(file_size) + " bytes, too short for an EROFS superblock", path));
    if (le32(sb, 0) != kErofsMagic) return fail(corrupt("image has no EROFS superblock (bad magic)", path));
    ErofsHeader h;
    h.blkszbits = uint8_t(sb[12]);
    h.blocks = le32(sb, 36);
    if (h.blkszbits < 9 || h.blkszbits > 16)
        return fail(corrupt("EROFS superblock gives a block size of 2^" + std::to_string(h.blkszbits), path));
    if ((uint64_t(h.blocks) << h.blkszbits) > file_size)
        return fail(corrupt("EROFS superblock counts " + std::to_string(h.blocks) + " blocks of " +
                                std::to_string(1u << h.blkszbits) + " bytes, more than the image's " +
                                std::to_string(file_size) + " bytes (truncated)",
                            path));
    return h;
}

std::string file_identity(const struct stat& st) {
    return std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
           std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec) + "\n";
}

std::string verified_record_path(const Paths& paths, const std::string& digest) {
    return paths.run + "/verified/" + (digest.rfind("sha256:", 0) == 0 ? digest.substr(7) : digest);
}

Result<Fd> open_checked_image(const Paths& paths, const layer::Store& store, const layer::Layer& layer, bool verify) {
    std::string image = store.image_path(layer.digest);
    // O_NOFOLLOW: a symlink in the store could point the kernel at any file on the node.
    Fd fd(::open(image.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) {
        Error e = sys_error("open", image);
        if (e.err == ELOOP) return fail(corrupt("layer image is a symlink", image));
        return fail(e.err == ENOENT ? std::move(e).context("layer image is missing") : std::move(e));
    }
    struct stat st;
    if (::fstat(fd.get(), &st) < 0) return fail(sys_error("fstat", image));
    if (!S_ISREG(st.st_mode)) return fail(corrupt("layer image is not a regular file", image));
    if (layer.size != 0 && uint64_t(st.st_size) != layer.size)
        return fail(corrupt("image is " + std::to_string(st.st_size) + " bytes, its metadata says " +
                                std::to_string(layer.size) + " (truncated or replaced)",
                            image));
    char sb[kErofsSuperSize] = {};
    ssize_t n = ::pread(fd.get(), sb, sizeof sb, off_t(kErofsSuperOffset));
    if (n < 0) return fail(sys_error("read", image));
    if (auto h = check_erofs_header(std::string_view(sb, size_t(n)), uint64_t(st.st_size), image); !h)
        return fail(h.error());
    if (verify)
        if (auto r = verify_once(paths, fd.get(), st, layer, image); !r) return fail(r.error());
    return fd;
}

}  // namespace dsec::mount
