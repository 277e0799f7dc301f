#include "dsec/sys/sha256.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "dsec/sys/fd.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace dsec {

namespace {
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

#if defined(__x86_64__)
// One block with the x86 SHA extensions (about ten times the portable code): layers are
// named by the hash of their image, so every build and import hashes the whole image.
__attribute__((target("sha,sse4.1"))) void block_shani(uint32_t* h, const uint8_t* p) {
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h)), 0xB1);  // CDAB
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 4)), 0x1B);  // EFGH
    __m128i s0 = _mm_alignr_epi8(tmp, s1, 8);     // ABEF
    s1 = _mm_blend_epi16(s1, tmp, 0xF0);          // CDGH
    const __m128i abef = s0, cdgh = s1;
    __m128i w[4];
    for (int i = 0; i < 16; i++) {
        __m128i& cur = w[i % 4];
        if (i < 4) {
            cur = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), swap);
        } else {
            // cur holds W[t-16..]; the others W[t-12..], W[t-8..], W[t-4..].
            __m128i m = _mm_sha256msg1_epu32(cur, w[(i + 1) % 4]);
            m = _mm_add_epi32(m, _mm_alignr_epi8(w[(i + 3) % 4], w[(i + 2) % 4], 4));
            cur = _mm_sha256msg2_epu32(m, w[(i + 3) % 4]);
        }
        __m128i msg = _mm_add_epi32(cur, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRound + 4 * i)));
        s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
        s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(msg, 0x0E));
    }
    s0 = _mm_add_epi32(s0, abef);
    s1 = _mm_add_epi32(s1, cdgh);
    tmp = _mm_shuffle_epi32(s0, 0x1B);            // FEBA
    s1 = _mm_shuffle_epi32(s1, 0xB1);             // DCHG
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h), _mm_blend_epi16(tmp, s1, 0xF0));      // DCBA
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 4), _mm_alignr_epi8(s1, tmp, 8));     // HGFE
}

// CPUID itself: SSE4.1 is leaf 1 ECX bit 19, SHA leaf 7 EBX bit 29 (clang before 15
// does not know "sha" in __builtin_cpu_supports).
bool have_shani() {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19))) return false;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
}
const bool kHaveShani = have_shani();
#endif
}  // namespace

Sha256::Sha256()
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::block(const uint8_t* p) {
#if defined(__x86_64__)
    if (kHaveShani) return block_shani(h_.data(), p);
#endif
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; i++) {
        uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + s1 + ch + kRound[i] + w[i];
        uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = s0 + maj;
        h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h_[0] += a, h_[1] += b, h_[2] += c, h_[3] += d, h_[4] += e, h_[5] += f, h_[6] += g, h_[7] += h;
}

void Sha256::update(const void* data, size_t len) {
    auto p = static_cast<const uint8_t*>(data);
    total_ += len;
    if (used_ > 0) {
        size_t take = std::min(len, 64 - used_);
        std::memcpy(buf_.data() + used_, p, take);
        used_ += take, p += take, len -= take;
        if (used_ < 64) return;
        block(buf_.data());
        used_ = 0;
    }
    for (; len >= 64; p += 64, len -= 64) block(p);
    std::memcpy(buf_.data(), p, len);
    used_ = len;
}

std::string Sha256::hex() {
    uint64_t bits = total_ * 8;
    uint8_t pad = 0x80;
    update(&pad, 1);
    uint8_t zero = 0;
    while (used_ != 56) update(&zero, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = uint8_t(bits >> (56 - 8 * i));
    update(len, 8);
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (uint32_t v : h_)
        for (int s = 28; s >= 0; s -= 4) out += digits[(v >> s) & 0xf];
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
