#!/bin/bash
# A hostile root inside an egress sandbox, given more than the default (NET_RAW and
# NET_ADMIN kept, seccomp off): it still cannot open raw or packet sockets (refused by
# the programs; the same calls work in a sandbox without a policy, so the programs are
# what refuses them), load or change BPF (no host capability; the pins are not in its
# view), reach the host through the veth's gateway address, or get past the rules by
# changing its own addresses and routes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net-lib.sh"

make_net_layer
start_mirror "dt86m$$" 198.18.86
busybox nc -l -p 7786 > /dev/null &
on_exit "kill $! 2>/dev/null"
egress_policy "$T/mirror.json" "$MIRROR/32=[8080]"
hostile=(--cap-add NET_RAW --cap-add NET_ADMIN --seccomp unconfined)
dsec-run create --layers netbox --id evil --policy "$T/mirror.json" "${hostile[@]}" > /dev/null || fail "create evil"
on_exit "dsec-run destroy --force evil > /dev/null 2>&1"
dsec-run create --layers netbox --id control "${hostile[@]}" > /dev/null || fail "create control"
on_exit "dsec-run destroy --force control > /dev/null 2>&1"
hostif=$(egress_if evil)
gw=$(dsec-run inspect evil | jq -r .egress.gateway)

p() { dsec-run exec "$1" -- /probe "${@:2}" < /dev/null 2>&1 || true; }
# Raw, packet and ICMP sockets: possible with these capabilities, refused by the programs.
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

# Its own network: with NET_ADMIN it may renumber eth0 and reroute, but the rules
# follow the destination, not the route, and the host still refuses it.
dsec-run exec evil -- sh -c "
    ip addr add 100.64.0.99/32 dev eth0 2>&1
    ip route add $MIRROR_HOST/32 via $gw 2>&1
    ip route add 169.254.0.0/16 via $gw 2>&1" < /dev/null > /dev/null 2>&1 || true
for url in "http://$gw:7786/" "http://$MIRROR_HOST:7786/" "http://$MIRROR:9000/" "http://169.254.169.254/"; do
    got=$(fetch evil "$url")
    grep -q "not permitted" <<< "$got" || fail "evil: $url: expected a refusal, got: $got"
done
[ "$(fetch evil "http://$MIRROR:8080/mirror")" = mirror-ok ] || fail "evil: the allowed mirror"

dsec-run destroy evil > /dev/null || fail "destroy evil"
dsec-run destroy control > /dev/null || fail "destroy control"
assert_net_clean
ip link show "$hostif" > /dev/null 2>&1 && fail "interface $hostif left"
echo ok
