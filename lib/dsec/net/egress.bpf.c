/* Egress filter for the sandboxes of one run directory (see dsec-guard(1)), attached
 * once to the run directory's cgroup parent on the unified tree, so that every sandbox
 * cgroup beneath inherits it. Each sandbox with egress has a slot of the `rules` array,
 * found by its cgroup id in `slots`: connect and sendmsg are allowed only to
 * destinations in it, loopback excepted; raw inet sockets and every inet protocol but
 * TCP and UDP are refused at socket(). A cgroup without a slot (a sandbox without
 * egress, which has no route out) is left alone. The kernel runs the sock_create hook for inet sockets
 * only: packet sockets are kept out by refusing egress to sandboxes that keep
 * CAP_NET_RAW. A refusal is EPERM to the caller and one more count in `denials`. */
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "egress_abi.h"

#define AF_INET 2
#define AF_INET6 10
#define AF_PACKET 17
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_RAW 3
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17

char _license[] SEC("license") = "GPL";

/* The depth of the sandboxes' cgroups on the unified tree (the parent's plus one): set
 * before loading. */
const volatile __u32 sandbox_level = 2;

/* Slot s holds entries [s * DSEC_EGRESS_SLOT, (s + 1) * DSEC_EGRESS_SLOT): two tables
 * and the config. The number of slots is set before loading. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, DSEC_EGRESS_SLOT);
    __type(key, __u32);
    __type(value, struct dsec_egress_rule);
} rules SEC(".maps");

/* cgroup id -> slot: written once when a sandbox gets egress, deleted when it goes. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1);
    __type(key, __u64);
    __type(value, __u32);
} slots SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, DSEC_EGRESS_MAX_DENIALS);
    __type(key, struct dsec_egress_denial);
    __type(value, __u64);
} denials SEC(".maps");

static __always_inline void count(const struct dsec_egress_denial *key) {
    __u64 one = 1, *n = bpf_map_lookup_elem(&denials, key);
    if (n)
        __sync_fetch_and_add(n, 1);
    else
        bpf_map_update_elem(&denials, key, &one, BPF_NOEXIST);
}

/* One bpf_loop step: does rule `i` of the live table match? The verifier checks this
 * callback once, not once per possible iteration, which keeps loading in milliseconds. */
struct match {
    __u32 addr[4];
    __u32 base;
    __u16 port;
    __u8 family;
    __u8 proto;
    int found;
};

static long match_rule(__u32 i, void *data) {
    struct match *m = data;
    __u32 k = m->base + i;
    struct dsec_egress_rule *r = bpf_map_lookup_elem(&rules, &k);
    if (!r) return 1;
    if (r->family != m->family) return 0;
    if (r->proto && r->proto != m->proto) return 0;
    if (m->port < r->port_lo || m->port > r->port_hi) return 0;
    if ((m->addr[0] & r->mask[0]) != r->addr[0]) return 0;
    if (m->family == 6 && ((m->addr[1] & r->mask[1]) != r->addr[1] || (m->addr[2] & r->mask[2]) != r->addr[2] ||
                           (m->addr[3] & r->mask[3]) != r->addr[3]))
        return 0;
    m->found = 1;
    return 1;
}

/* The first rule array index of the calling task's sandbox's slot, or -1 (no slot: no
 * egress rules, left alone). */
static __always_inline long slot_of(__u64 *cgroup) {
    *cgroup = bpf_get_current_ancestor_cgroup_id(sandbox_level);
    __u32 *slot = bpf_map_lookup_elem(&slots, cgroup);
    if (!slot) return -1;
    return (long)*slot * DSEC_EGRESS_SLOT;
}

/* addr: network byte order words (IPv4 in word 0); port: host order. */
static __always_inline int allowed(__u32 base, __u8 family, const __u32 *addr, __u16 port, __u8 proto) {
    /* The sandbox's own loopback is always its own. */
    if (family == 4 && (bpf_ntohl(addr[0]) >> 24) == 127) return 1;
    if (family == 6 && !addr[0] && !addr[1] && !addr[2] && addr[3] == bpf_htonl(1)) return 1;
    __u32 at = base + DSEC_EGRESS_CONFIG;
    struct dsec_egress_config *cfg = bpf_map_lookup_elem(&rules, &at);
    if (!cfg) return 0;
    __u32 live = cfg->live & 1;
    __u32 n = cfg->count[live];
    if (n > DSEC_EGRESS_MAX_RULES) n = DSEC_EGRESS_MAX_RULES;
    struct match m = {};
    m.addr[0] = addr[0];
    m.addr[1] = addr[1];
    m.addr[2] = addr[2];
    m.addr[3] = addr[3];
    m.base = base + live * DSEC_EGRESS_MAX_RULES;
    m.port = port;
    m.family = family;
    m.proto = proto;
    bpf_loop(n, match_rule, &m, 0);
    return m.found;
}

static __always_inline __u8 proto_of(struct bpf_sock_addr *ctx) {
    return ctx->type == SOCK_STREAM ? IPPROTO_TCP : ctx->type == SOCK_DGRAM ? IPPROTO_UDP : 0;
}

static __always_inline int check4(struct bpf_sock_addr *ctx, __u8 kind) {
    struct dsec_egress_denial d = {};
    long base = slot_of(&d.cgroup);
    if (base < 0) return 1;
    d.family = 4;
    d.addr[0] = ctx->user_ip4;
    d.port = bpf_ntohs((__u16)ctx->user_port);
    d.proto = proto_of(ctx);
    if (allowed((__u32)base, 4, d.addr, d.port, d.proto)) return 1;
    d.kind = kind;
    count(&d);
    return 0;
}

static __always_inline int check6(struct bpf_sock_addr *ctx, __u8 kind) {
    struct dsec_egress_denial d = {};
    long base = slot_of(&d.cgroup);
    if (base < 0) return 1;
    d.addr[0] = ctx->user_ip6[0];
    d.addr[1] = ctx->user_ip6[1];
    d.addr[2] = ctx->user_ip6[2];
    d.addr[3] = ctx->user_ip6[3];
    d.family = 6;
    /* ::ffff:a.b.c.d reaches a.b.c.d: judged by the IPv4 rules. */
    if (!d.addr[0] && !d.addr[1] && d.addr[2] == bpf_htonl(0xffff)) {
        d.family = 4;
        d.addr[0] = d.addr[3];
        d.addr[3] = 0;
        d.addr[2] = 0;
    }
    d.port = bpf_ntohs((__u16)ctx->user_port);
    d.proto = proto_of(ctx);
    if (allowed((__u32)base, d.family, d.addr, d.port, d.proto)) return 1;
    d.kind = kind;
    count(&d);
    return 0;
}

SEC("cgroup/connect4")
int connect4(struct bpf_sock_addr *ctx) { return check4(ctx, 1); }

SEC("cgroup/connect6")
int connect6(struct bpf_sock_addr *ctx) { return check6(ctx, 1); }

SEC("cgroup/sendmsg4")
int sendmsg4(struct bpf_sock_addr *ctx) { return check4(ctx, 2); }

SEC("cgroup/sendmsg6")
int sendmsg6(struct bpf_sock_addr *ctx) { return check6(ctx, 2); }

SEC("cgroup/sock_create")
int sock_create(struct bpf_sock *sk) {
    struct dsec_egress_denial d = {};
    if (slot_of(&d.cgroup) < 0) return 1;
    int ok;
    if (sk->family == AF_INET || sk->family == AF_INET6)
        ok = (sk->type == SOCK_STREAM && sk->protocol == IPPROTO_TCP) ||
             (sk->type == SOCK_DGRAM && sk->protocol == IPPROTO_UDP);
    else
        ok = sk->family != AF_PACKET && sk->type != SOCK_RAW;
    if (ok) return 1;
    d.family = sk->family == AF_INET6 ? 6 : sk->family == AF_INET ? 4 : 0;
    d.proto = (__u8)sk->protocol;
    d.kind = 3;
    count(&d);
    return 0;
}
