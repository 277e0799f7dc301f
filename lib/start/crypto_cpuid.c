/* libcrypto's probe of the CPU, put off in the static dsec-run until there is enough to
 * hash for it to pay.
 *
 * The libcrypto object that holds OPENSSL_ia32cap_P (the capability vector its assembly
 * reads) calls OPENSSL_cpuid_setup from its .init section, so every start of a program
 * linked with it runs about ten `cpuid` instructions; in a guest each one exits to the
 * hypervisor (3.5 us each on the hosts measured: some 35 us of the 0.6 ms a dsec-run start
 * costs). dsec-run hashes the output of every exec and one-shot, mostly a few bytes, which
 * libcrypto's plain x86-64 code (what it runs while the vector is 0) hashes well enough:
 * 375 MB/s there against 1.79 GB/s with the SHA extensions (`openssl speed sha256`), 2.1 ns
 * a byte more, so 16 KiB hashed the plain way cost what the probe does. The setup is
 * replaced here by nothing, and the first call of dsec_sha256_hashing that brings what
 * this process hashed past 16 KiB fills the vector as libcrypto's own setup does
 * (crypto/cpuid.c, without its OPENSSL_ia32cap variable): the SHA extensions hash the
 * rest. At worst a process pays the probe twice over. Linked into the static dsec-run
 * only, whose libcrypto is the archive it was built against; the other programs load
 * libcrypto.so, which probes at its load as usual.
 */
#if defined(__x86_64__)
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

extern unsigned int OPENSSL_ia32cap_P[4];
uint64_t OPENSSL_ia32_cpuid(unsigned int *cap);

/* Called by libcrypto's .init: nothing now (dsec_sha256_hashing below). */
void OPENSSL_cpuid_setup(void) {}

/* Called by dsec::Sha256::update with the length it is about to hash (a weak reference:
 * absent from the other programs). */
void dsec_sha256_hashing(size_t len) {
    static atomic_size_t hashed;
    static atomic_flag probed = ATOMIC_FLAG_INIT;
    if (atomic_fetch_add_explicit(&hashed, len, memory_order_relaxed) + len < ((size_t)16 << 10)) return;
    if (atomic_flag_test_and_set(&probed)) return;
    uint64_t vec = OPENSSL_ia32_cpuid(OPENSSL_ia32cap_P);
    /* As libcrypto's setup: bit 10 of the first word, reserved by Intel, marks the vector
     * as filled. */
    OPENSSL_ia32cap_P[0] = (unsigned int)vec | (1u << 10);
    OPENSSL_ia32cap_P[1] = (unsigned int)(vec >> 32);
}
#endif
