#include "dsec/sys/sha256.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <new>
#include <utility>
#include <vector>

#include "dsec/sys/fd.h"

namespace dsec {

namespace {
// Fetched once: an implicit fetch (EVP_sha256()) looks the algorithm up again at every
// init. No configuration file is read: dsec hashes, it does not need a system's
// OpenSSL policy, and a tool that starts once per exec should not open one.
const EVP_MD* sha256_md() {
    static const EVP_MD* md = [] {
        OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr);
        return EVP_MD_fetch(nullptr, "SHA256", nullptr);
    }();
    return md;
}

// Only an allocation can fail here (SHA-256 is in the default provider, always built
// in): treated as the allocation failure it is.
EVP_MD_CTX* new_context() {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    const EVP_MD* md = sha256_md();
    if (!ctx || !md || EVP_DigestInit_ex(ctx, md, nullptr) != 1) {
        EVP_MD_CTX_free(ctx);
        throw std::bad_alloc();
    }
    return ctx;
}
}  // namespace

Sha256::Sha256() : ctx_(new_context()) {}

Sha256::Sha256(const Sha256& other) : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_MD_CTX_copy_ex(ctx_, other.ctx_) != 1) {
        EVP_MD_CTX_free(ctx_);
        throw std::bad_alloc();
    }
}

Sha256& Sha256::operator=(const Sha256& other) {
    if (this != &other) {
        Sha256 copy(other);
        std::swap(ctx_, copy.ctx_);
    }
    return *this;
}

Sha256::Sha256(Sha256&& other) noexcept : ctx_(std::exchange(other.ctx_, nullptr)) {}

Sha256& Sha256::operator=(Sha256&& other) noexcept {
    std::swap(ctx_, other.ctx_);
    return *this;
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(const void* data, size_t len) {
    if (len) EVP_DigestUpdate(ctx_, data, len);
}

std::string Sha256::hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx_, digest, &len);
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(2 * len);
    for (unsigned i = 0; i < len; i++) {
        out += digits[digest[i] >> 4];
        out += digits[digest[i] & 0xf];
    }
    return out;
}

Result<std::string> sha256_file(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return fail(sys_error("open", path));
    return sha256_fd(fd.get(), path);
}

Result<std::string> sha256_fd(int fd, const std::string& path) {
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    Sha256 sha;
    std::vector<char> buf(1 << 20);
    for (off_t off = 0;;) {
        ssize_t n = ::pread(fd, buf.data(), buf.size(), off);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(sys_error("read", path));
        }
        if (n == 0) break;
        sha.update(buf.data(), size_t(n));
        off += n;
    }
    return sha.hex();
}

}  // namespace dsec
