#include "dsec/net/resolve.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>

namespace dsec::net {

Result<std::vector<std::string>> resolve_name(const std::string& name) {
    struct addrinfo hints = {};
    hints.ai_family = AF_UNSPEC;
    // One entry per address rather than one per socket type.
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo* found = nullptr;
    int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &found);
    if (rc != 0) {
        Error e = make_error(Code::unresolved, "domain \"" + name + "\" does not resolve on the host: " + ::gai_strerror(rc));
        e.op = "getaddrinfo";
        e.path = name;
        return fail(std::move(e));
    }
    std::vector<std::string> out;
    for (auto* a = found; a; a = a->ai_next) {
        char text[INET6_ADDRSTRLEN] = "";
        const void* addr = a->ai_family == AF_INET6 ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr)
                                                    : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr);
        if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) && ::inet_ntop(a->ai_family, addr, text, sizeof text))
            out.push_back(text);
    }
    ::freeaddrinfo(found);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (out.empty()) return fail(make_error(Code::unresolved, "domain \"" + name + "\" has no IPv4 or IPv6 address on the host", name));
    return out;
}

}  // namespace dsec::net
