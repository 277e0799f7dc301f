#include "dsec/sandbox/limits.h"

#include <sys/random.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <ctime>

namespace dsec::sandbox {

Status check_id(const std::string& id) {
    bool ok = !id.empty() && id.size() <= 64 && id[0] != '.' && id[0] != '-';
    for (char c : id)
        if (!std::isalnum((unsigned char)c) && c != '_' && c != '.' && c != '-') ok = false;
    if (!ok)
        return fail(make_error("bad_input", "invalid sandbox id \"" + id +
                                                "\": 1-64 letters, digits, '_', '.', '-', not starting with '.' or '-'"));
    return {};
}

std::string random_id() {
    unsigned char bytes[6] = {};
    // getrandom of 6 bytes does not come up short; it can be interrupted before it starts.
    ssize_t n;
    while ((n = ::getrandom(bytes, sizeof bytes, 0)) < 0 && errno == EINTR) {
    }
    if (n != ssize_t(sizeof bytes)) {
        // No entropy source at all: time and pid still differ between creates, and a
        // clash fails the create with "exists" (mkdir of the state is the claim).
        uint64_t mix = uint64_t(std::time(nullptr)) * 1000003u ^ uint64_t(::getpid()) << 20 ^ uint64_t(std::clock());
        for (auto& b : bytes) b = (unsigned char)(mix), mix >>= 8;
    }
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned char b : bytes) {
        out += hex[b >> 4];
        out += hex[b & 15];
    }
    return out;
}

}  // namespace dsec::sandbox
