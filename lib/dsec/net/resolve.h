// Domain names of egress rules, resolved on the host with the host's own resolver
// (getaddrinfo: /etc/hosts, DNS, whatever /etc/nsswitch.conf says), never by asking the
// sandbox.
#pragma once

#include <string>
#include <vector>

#include "dsec/sys/error.h"

namespace dsec::net {

/// The IPv4 and IPv6 addresses `name` resolves to on the host, as text, sorted and each
/// once. Errors: unresolved (the resolver says the name has no address, or cannot say:
/// the message carries gai_strerror's words).
Result<std::vector<std::string>> resolve_name(const std::string& name);

}  // namespace dsec::net
