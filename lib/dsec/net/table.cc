#include "dsec/net/table.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstring>

namespace dsec::net {

bool allows(const RuleTable& table, int family, const std::array<uint8_t, 16>& addr, uint16_t port, uint8_t proto) {
    uint32_t a[4];
    std::memcpy(a, addr.data(), 16);
    uint8_t fam = family == AF_INET6 ? 6 : 4;
    if (fam == 4 && addr[0] == 127) return true;
    if (fam == 6 && !a[0] && !a[1] && !a[2] && a[3] == htonl(1)) return true;
    for (auto& r : table) {
        if (r.family != fam || (r.proto && r.proto != proto) || port < r.port_lo || port > r.port_hi) continue;
        bool in = true;
        for (int w = 0; w < (fam == 6 ? 4 : 1); w++) in = in && (a[w] & r.mask[w]) == r.addr[w];
        if (in) return true;
    }
    return false;
}

}  // namespace dsec::net
