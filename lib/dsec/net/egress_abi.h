/* The layout shared by the egress programs (egress.bpf.c) and the code that fills their
 * maps (egress.cc): plain C, fixed widths, no padding the two could read differently. */
#ifndef DSEC_NET_EGRESS_ABI_H
#define DSEC_NET_EGRESS_ABI_H

#include <linux/types.h>

/* Rules per table. Each sandbox's slot of the rule array holds two tables, one live and
 * one being written, and after them its config (below) at index DSEC_EGRESS_CONFIG of
 * the slot: DSEC_EGRESS_SLOT entries in all. */
#define DSEC_EGRESS_MAX_RULES 256
#define DSEC_EGRESS_CONFIG (2 * DSEC_EGRESS_MAX_RULES)
#define DSEC_EGRESS_SLOT (DSEC_EGRESS_CONFIG + 1)
/* Denials counted per run directory (least recently used go first). */
#define DSEC_EGRESS_MAX_DENIALS 16384

/* One allowed destination range with one port range: a packet matches when
 * (address & mask) == addr word by word, its port is in [port_lo, port_hi] and its
 * protocol is proto (0: any). Addresses and masks are in network byte order; an IPv4
 * rule uses word 0 only. */
struct dsec_egress_rule {
    __u32 addr[4];
    __u32 mask[4];
    __u16 port_lo;
    __u16 port_hi;
    __u8 family; /* 4 or 6 */
    __u8 proto;  /* 0, 6 (tcp) or 17 (udp) */
    __u8 pad[2];
};

/* Which table is live and how many rules each holds, stored in the first bytes of the
 * slot's entry DSEC_EGRESS_CONFIG. Switching `live` is one aligned word write, so
 * a connect sees the old rules or the new ones, never half of each. */
struct dsec_egress_config {
    __u32 live;     /* 0 or 1 */
    __u32 count[2];
};

/* What a denial is counted under. kind: 1 connect, 2 send, 3 socket. */
struct dsec_egress_denial {
    __u64 cgroup; /* the sandbox's cgroup id on the unified tree */
    __u32 addr[4];
    __u16 port;
    __u8 family;
    __u8 proto;
    __u8 kind;
    __u8 pad[3];
};

#endif
