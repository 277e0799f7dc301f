// The rule table the egress programs read (egress_abi.h), and the same matching in C++
// for whoever has to judge a connection the kernel already made (cutting connections
// after a deny) and for the tests.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "dsec/net/egress_abi.h"

namespace dsec::net {

/// One table of rules: every (range, port range) pair of every allowed destination.
using RuleTable = std::vector<dsec_egress_rule>;

/// Whether `table` lets a connection or datagram out to `addr` (16 bytes, IPv4 in the
/// first four) port `port` (host order), protocol 6 or 17; loopback always.
bool allows(const RuleTable& table, int family, const std::array<uint8_t, 16>& addr, uint16_t port, uint8_t proto);

}  // namespace dsec::net
