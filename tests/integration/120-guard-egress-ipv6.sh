#!/bin/bash
# IPv6 egress: a sandbox gets IPv6 addresses and a route only when the host forwards
# IPv6 (net.ipv6.conf.all.forwarding, host-wide: the operator's switch, never flipped
# by dsec), and then reaches what its policy allows over IPv6 (through NAT) and nothing
# else. The test runs in a network namespace of its own, which stands for the host:
# forwarding is switched on there only.
if [ "${DSEC_TEST_NS:-}" != "1" ] && [ "${DSEC_OWN_NETNS:-}" != "1" ]; then
    [ "$(id -u)" = 0 ] || { echo "SKIP: integration tests run as root" >&2; exit 77; }
    export DSEC_OWN_NETNS=1
    exec unshare --net bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net-lib.sh"

ip link set lo up
make_net_layer
start_mirror "dt120$$" 198.18.120
M6=fd99:120::2
ip -6 addr add fd99:120::1/64 dev "dt120$$" nodad
nsenter --net=/proc/"$MIRROR_PID"/ns/net sh -c "ip -6 addr add $M6/64 dev eth0 nodad
    ip -6 route add default via fd99:120::1"
nsenter --net=/proc/"$MIRROR_PID"/ns/net "$DSEC_BIN/dsec-probe" sink 9001 &
on_exit "kill $! 2>/dev/null"
egress_policy "$T/v6.json" "$M6/128=[9001]"
send() { dsec-run exec "$1" -- /probe stream "$2" "$3" 1 < /dev/null; }

# The host does not forward IPv6: no IPv6 inside, and an IPv6 connect goes nowhere.
echo 0 > /proc/sys/net/ipv6/conf/all/forwarding
out=$(dsec-run create --layers netbox --id v4only --policy "$T/v6.json") || fail "create: $out"
on_exit "dsec-run destroy --force v4only > /dev/null 2>&1"
egress_if v4only > /dev/null
[ -z "$(jq -r '.egress.address6 // empty' <<< "$out")" ] || fail "IPv6 without forwarding: $out"
[ "$(send v4only "$M6" 9001)" = "stream ENETUNREACH connect $M6" ] || fail "IPv6 without a route: $(send v4only "$M6" 9001)"
dsec-run destroy v4only > /dev/null || fail "destroy v4only"

# The host forwards IPv6: addresses, a route, and the policy holds over IPv6.
echo 1 > /proc/sys/net/ipv6/conf/all/forwarding
out=$(dsec-run create --layers netbox --id v6 --policy "$T/v6.json") || fail "create: $out"
on_exit "dsec-run destroy --force v6 > /dev/null 2>&1"
egress_if v6 > /dev/null
addr6=$(jq -r '.egress.address6 // empty' <<< "$out")
gw6=$(jq -r '.egress.gateway6 // empty' <<< "$out")
[[ "$addr6" == fdd5:ec00:0:1::* && "$gw6" == fdd5:ec00:0:1::* ]] || fail "the IPv6 addresses: $out"
[ "$(dsec-run inspect v6 | jq -r .egress.address6)" = "$addr6" ] || fail "inspect: no address6"
dsec-run exec v6 -- ip -6 addr show dev eth0 < /dev/null | grep -q "$addr6/126" || fail "eth0 inside has no $addr6"
case $(send v6 "$M6" 9001) in "stream ok "*) ;; *) fail "the allowed IPv6 address: $(send v6 "$M6" 9001)" ;; esac
# Another port, another address, the host's end of the link: refused by the programs.
for dest in "$M6 9002" "fd99:120::1 9001" "$gw6 9001"; do
    # shellcheck disable=SC2086
    [ "$(send v6 $dest)" = "stream EPERM connect ${dest% *}" ] || fail "$dest: $(send v6 $dest)"
done
# The mirror sees the host's address, not the sandbox's (NAT66), while a long send runs.
dsec-run exec v6 -- /probe stream "$M6" 9001 100000 < /dev/null > /dev/null 2>&1 &
sender=$!
on_exit "kill $sender 2>/dev/null"
peer=""
for _ in $(seq 100); do
    peer=$(nsenter --net=/proc/"$MIRROR_PID"/ns/net ss -Htn state established '( sport = :9001 )' | awk '{print $4}')
    [ -n "$peer" ] && break
    sleep 0.05
done
[[ "$peer" == "[fd99:120::1]:"* ]] || fail "the mirror sees the peer '$peer', not the host's fd99:120::1"
dsec-run kill v6 > /dev/null 2>&1 || true
wait "$sender" 2>/dev/null || true
grep -q "ip6 saddr fdd5:ec00:0:1::/64" <<< "$(nft list table inet "$NET_TABLE")" || fail "no IPv6 masquerade rule: $(nft list table inet "$NET_TABLE")"

dsec-run destroy v6 > /dev/null || fail "destroy"
assert_net_clean
echo ok
