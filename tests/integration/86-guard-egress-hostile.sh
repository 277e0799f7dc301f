#!/bin/bash
# A hostile root inside an egress sandbox, with seccomp off: it cannot open raw, packet
# or ICMP sockets, load or change BPF (no host capability; the pins are not in its
# view), reach the host through the veth's gateway address or its other addresses,
# or change its own addresses and routes. Egress is refused outright with NET_RAW or
# NET_ADMIN kept (packet sockets and tunnels would go around the programs), at create
# and at a live allow. A control sandbox with NET_RAW and no policy shows the calls work
# where nothing refuses them; in the egress sandbox the missing capability and, for
# inet raw sockets, the sock_create program refuse them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net-lib.sh"

make_net_layer
start_mirror "dt86m$$" 198.18.86
busybox nc -l -p 7786 > /dev/null &
on_exit "kill $! 2>/dev/null"
egress_policy "$T/mirror.json" "$MIRROR/32=[8080]"
dsec-run create --layers netbox --id evil --policy "$T/mirror.json" --seccomp unconfined > /dev/null \
    || fail "create evil"
on_exit "dsec-run destroy --force evil > /dev/null 2>&1"
caps=(--cap-add NET_RAW --seccomp unconfined)
dsec-run create --layers netbox --id control "${caps[@]}" > /dev/null || fail "create control"
on_exit "dsec-run destroy --force control > /dev/null 2>&1"
for cap in NET_RAW NET_ADMIN; do
    expect_exit 1 dsec-run create --layers netbox --id capped --policy "$T/mirror.json" --cap-add "$cap" \
        > "$T/out" 2> "$T/err"
    grep -q "$cap" "$T/err" || fail "egress with $cap: $(cat "$T/err")"
    [ ! -e "$DSEC_RUN/sandboxes/capped" ] || fail "egress with $cap left a sandbox"
done
expect_exit 1 dsec-guard net allow control "$MIRROR,8080" > /dev/null 2> "$T/err"
grep -q NET_RAW "$T/err" || fail "live egress with NET_RAW: $(cat "$T/err")"
[ -z "$(dsec-run inspect control | jq -r '.egress // empty')" ] || fail "control got egress"
hostif=$(egress_if evil)
gw=$(dsec-run inspect evil | jq -r .egress.gateway)

p() { dsec-run exec "$1" -- /probe "${@:2}" < /dev/null 2>&1 || true; }
# Raw, packet and ICMP sockets: possible with NET_RAW, refused in the egress sandbox.
for kind in raw raw6 packet packet_dgram raw_flags; do
    [ "$(p control "$kind" | awk '{print $2}')" = ok ] || fail "control: $kind: $(p control "$kind")"
    [ "$(p evil "$kind" | awk '{print $2}')" = EPERM ] || fail "evil: $kind: $(p evil "$kind")"
done
[ "$(p evil icmp_dgram | awk '{print $2}')" != ok ] || fail "evil: an ICMP socket"
# BPF: no map, no program (it would need capabilities in the host's namespace).
for kind in bpf_map bpf_prog; do
    [ "$(p evil "$kind" | awk '{print $2}')" != ok ] || fail "evil: $kind worked"
done
# The pins are not in its view, and no bpffs can be mounted.
dsec-run exec evil -- sh -c 'ls /sys/fs/bpf 2>/dev/null; ls /run 2>/dev/null' < /dev/null 2>&1 | grep -q egress \
    && fail "the pins are visible inside"
[ "$(p evil mount bpf | awk '{print $2}')" != ok ] || fail "evil mounted a bpffs"

# Its own network stays as dsec made it.
out=$(dsec-run exec evil -- sh -c "ip addr add 100.64.0.99/32 dev eth0; ip link set eth0 down" < /dev/null 2>&1 || true)
grep -q "not permitted" <<< "$out" || fail "evil changed its network: $out"
for url in "http://$gw:7786/" "http://$MIRROR_HOST:7786/" "http://$MIRROR:9000/" "http://169.254.169.254/"; do
    got=$(fetch evil "$url")
    grep -q "not permitted" <<< "$got" || fail "evil: $url: expected a refusal, got: $got"
done
[ "$(fetch evil "http://$MIRROR:8080/mirror")" = mirror-ok ] || fail "evil: the allowed mirror"
# After all of it the programs (on the run directory's cgroup parent) are still in force
# on its cgroup.
attached=$(bpftool cgroup show "/sys/fs/cgroup/unified/$DSEC_CGROUP_PARENT/evil" effective \
    | grep -cE "connect4|connect6|sendmsg4|sendmsg6|sock_create" || true)
[ "$attached" = 5 ] || fail "evil: $attached of the 5 programs in force"

dsec-run destroy evil > /dev/null || fail "destroy evil"
dsec-run destroy control > /dev/null || fail "destroy control"
assert_net_clean
ip link show "$hostif" > /dev/null 2>&1 && fail "interface $hostif left"
echo ok
