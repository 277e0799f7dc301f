// libcrypto's SHA256_Init/Update/Final, not its EVP interface: the first EVP digest of a
// process activates the default provider, about 1 ms of CPU, and dsec-run hashes the
// output of every exec (a 5 ms operation). These functions run the same assembly (SHA-NI
// where the CPU has it) with no provider. OpenSSL 3 marks them deprecated; the 1.1.1 API
// level below keeps them declared without a warning.
#define OPENSSL_API_COMPAT 0x10101000L
#include "dsec/sys/sha256.h"

#include <fcntl.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "dsec/sys/fd.h"

namespace dsec {

Sha256::Sha256() : ctx_(new SHA256_CTX) { SHA256_Init(ctx_); }

Sha256::Sha256(const Sha256& other) : ctx_(new SHA256_CTX(*other.ctx_)) {}

Sha256& Sha256::operator=(const Sha256& other) {
    if (this != &other) *ctx_ = *other.ctx_;
    return *this;
}

Sha256::Sha256(Sha256&& other) noexcept : ctx_(std::exchange(other.ctx_, nullptr)) {}

Sha256& Sha256::operator=(Sha256&& other) noexcept {
    std::swap(ctx_, other.ctx_);
    return *this;
}

Sha256::~Sha256() { delete ctx_; }

// Defined in the static dsec-run only (lib/start/crypto_cpuid.c): libcrypto's probe of
// the CPU, made there once the process has hashed enough for it to pay.
extern "C" void dsec_sha256_hashing(size_t len) __attribute__((weak));

void Sha256::update(const void* data, size_t len) {
    if (!len) return;
    if (dsec_sha256_hashing) dsec_sha256_hashing(len);
    SHA256_Update(ctx_, data, len);
}

std::string Sha256::hex() {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256_Final(digest, ctx_);
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(2 * sizeof digest);
    for (unsigned char b : digest) {
        out += digits[b >> 4];
        out += digits[b & 0xf];
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
