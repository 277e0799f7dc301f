#include "dsec/sandbox/limits.h"

#include <sys/random.h>

#include <cctype>
#include <cstdlib>

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
    (void)::getrandom(bytes, sizeof bytes, 0);
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned char b : bytes) {
        out += hex[b >> 4];
        out += hex[b & 15];
    }
    return out;
}

}  // namespace dsec::sandbox
