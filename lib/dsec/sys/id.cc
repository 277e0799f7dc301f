#include "dsec/sys/id.h"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <vector>

namespace dsec {

Status check_id(const std::string& id) {
    auto bad = [&](const std::string& why) {
        return fail(make_error(Code::bad_input, "invalid sandbox id \"" + id + "\": " + why));
    };
    if (id.empty() || id.size() > 64) return bad("must be 1 to 64 characters");
    if (id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
        std::string::npos)
        return bad("only letters, digits, '.', '_' and '-' are allowed");
    if (id[0] == '.' || id[0] == '-') return bad("must not start with '.' or '-'");
    return {};
}

std::string random_hex(size_t bytes) {
    std::vector<unsigned char> raw(bytes);
    size_t got = 0;
    while (got < bytes) {
        ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
        if (n > 0) got += size_t(n);
        else if (n < 0 && errno != EINTR) break;
    }
    if (got < bytes) {
        uint64_t mix = uint64_t(std::time(nullptr)) * 1000003u ^ uint64_t(::getpid()) << 20 ^ uint64_t(std::clock());
        for (size_t i = got; i < bytes; i++) {
            raw[i] = (unsigned char)mix;
            mix = mix >> 8 | mix << 56;
        }
    }
    static const char* kHex = "0123456789abcdef";
    std::string out;
    for (unsigned char b : raw) {
        out += kHex[b >> 4];
        out += kHex[b & 15];
    }
    return out;
}

}  // namespace dsec
