#!/bin/bash
# Denials become events: each refused connect, send and socket is counted per sandbox
# and destination by the programs; `dsec-guard events` prints them as event records,
# `--follow` prints the counts that grow, and `dsec-run inspect` shows the sum.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net-lib.sh"

make_net_layer
start_mirror "dt89m$$" 198.18.89
egress_policy "$T/mirror.json" "$MIRROR/32=[8080]"
dsec-run create --layers netbox --id ev --policy "$T/mirror.json" > /dev/null || fail "create"
on_exit "dsec-run destroy --force ev > /dev/null 2>&1"
egress_if ev > /dev/null

# Nothing refused yet: no event, a zero count.
[ -z "$(dsec-guard events ev)" ] || fail "events before any denial: $(dsec-guard events ev)"
[ "$(dsec-run inspect ev | jq -r .egress_denials.denied)" = 0 ] || fail "inspect before: $(dsec-run inspect ev)"
# Allowed traffic is not counted; three refused connects to the metadata address are.
[ "$(fetch ev "http://$MIRROR:8080/mirror")" = mirror-ok ] || fail "mirror"
for _ in 1 2 3; do fetch ev "http://169.254.169.254/" > /dev/null; done
# DNS to the mirror, not allowed (nslookup connects its UDP socket: a connect event).
dsec-run exec ev -- nslookup example.test "$MIRROR" < /dev/null > /dev/null 2>&1 || true
out=$(dsec-guard events ev) || fail "events: $out"
jq -se 'any(.[]; .dest == "169.254.169.254" and .port == 80 and .op == "connect" and .protocol == "tcp"
              and .count == 3 and .type == "event" and .event == "egress_denied" and .id == "ev")' <<< "$out" \
    > /dev/null || fail "no connect event for the metadata address: $out"
jq -se "any(.[]; .dest == \"$MIRROR\" and .port == 53 and .protocol == \"udp\")" <<< "$out" > /dev/null \
    || fail "no event for DNS to the mirror: $out"
jq -se "any(.[]; .dest == \"$MIRROR\" and .port == 8080)" <<< "$out" > /dev/null && fail "allowed traffic counted: $out"
total=$(jq -s 'map(.count) | add' <<< "$out")
[ "$(dsec-run inspect ev | jq -r .egress_denials.denied)" = "$total" ] || fail "inspect: $(dsec-run inspect ev)"
# All sandboxes at once: the same records.
[ "$(dsec-guard events | jq -s length)" = "$(jq -s length <<< "$out")" ] || fail "events without an id"
# --follow: the present ones first, then what grows, with "new".
dsec-guard events ev -f --interval 0.1 > "$T/follow" &
follower=$!
sleep 0.5
fetch ev "http://169.254.169.254/" > /dev/null
sleep 0.5
kill -INT "$follower"
wait "$follower" || true
jq -se 'any(.[]; .dest == "169.254.169.254" and .count == 4 and .new == 1)' "$T/follow" > /dev/null \
    || fail "--follow did not print the new denial: $(cat "$T/follow")"
# An unknown id: an error.
expect_exit 1 dsec-guard events no-such-box > /dev/null 2>&1

dsec-run destroy ev > /dev/null || fail "destroy"
assert_net_clean
echo ok
