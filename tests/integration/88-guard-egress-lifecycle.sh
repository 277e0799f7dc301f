#!/bin/bash
# Egress through a sandbox's life: reset gives the new init a new veth (the old one went
# with the old network namespace) and keeps the rules; fork gives each fork the rules its
# parent has now; a sandbox whose init died is cleaned by dsec-reclaim gc down to its
# pins; two egress sandboxes never collide on an address; the run directory's programs
# follow a cgroup parent made again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net-lib.sh"

make_net_layer
start_mirror "dt88m$$" 198.18.88
egress_policy "$T/mirror.json" "$MIRROR/32=[8080]"
dsec-run create --layers netbox --id life --policy "$T/mirror.json" > /dev/null || fail "create"
on_exit "dsec-run destroy --force life > /dev/null 2>&1"
dsec-run create --layers netbox --id other --policy "$T/mirror.json" > /dev/null || fail "create other"
on_exit "dsec-run destroy --force other > /dev/null 2>&1"
a=$(dsec-run inspect life | jq -r .egress.address)
b=$(dsec-run inspect other | jq -r .egress.address)
[ "$a" != "$b" ] || fail "two sandboxes got the same address $a"
egress_if life > /dev/null
egress_if other > /dev/null

# reset: a new init, a new veth, the same rules.
dsec-run reset life > /dev/null || fail "reset"
egress_if life > /dev/null
[ "$(fetch life "http://$MIRROR:8080/mirror")" = mirror-ok ] || fail "after reset: mirror"
grep -q "not permitted" <<< "$(fetch life "http://$MIRROR:9000/")" || fail "after reset: port 9000"

# fork: the parent's rules of now (live changes included).
dsec-guard net allow other "$MIRROR,9000,tcp" > /dev/null || fail "allow other"
dsec-guard net deny other "$MIRROR,8080,tcp" > /dev/null || fail "deny other"
out=$(dsec-run fork other --count 1) || fail "fork: $out"
forked=$(jq -r .id <<< "$out")
on_exit "dsec-run destroy --force $forked > /dev/null 2>&1"
[ -n "$(egress_if "$forked")" ] || fail "the fork has no egress"
grep -q "not permitted" <<< "$(fetch "$forked" "http://$MIRROR:8080/mirror")" || fail "the fork reached a denied port"
dsec-run exec "$forked" -- sh -c "echo hi | timeout 5 nc $MIRROR 9000 && echo sent" < /dev/null 2>&1 | grep -q sent \
    || fail "the fork cannot reach the port its parent allowed live"
dsec-run destroy "$forked" > /dev/null

# gc: an init killed from outside leaves veth-less debris (its rules and pins): gc clears it.
pid=$(dsec-run inspect other | jq -r .pid)
kill -9 "$pid"
for _ in $(seq 100); do [ -e /proc/"$pid" ] || break; sleep 0.05; done
dsec-reclaim gc > "$T/gc" || fail "gc: $(cat "$T/gc")"
grep -q '"dead_init"' "$T/gc" || fail "gc did not see the dead init: $(cat "$T/gc")"
[ ! -e "$DSEC_RUN/bpf/other" ] || fail "gc left the pins of other"
# The live sandbox's egress is untouched by gc.
[ "$(fetch life "http://$MIRROR:8080/mirror")" = mirror-ok ] || fail "gc broke a live sandbox's egress"

# The run directory's programs outlive its last egress sandbox (until gc). If the cgroup
# parent they hang on is removed and made again meanwhile (gc removes an empty one), the
# next create replaces the links left on the old one: the new sandbox is filtered.
dsec-run destroy life > /dev/null || fail "destroy"
[ -e "$DSEC_RUN/bpf/-egress/connect4" ] || fail "the programs went with the last egress sandbox"
[ ! -e "$DSEC_RUN/bpf/life" ] || fail "destroy left the pins of life"
rmdir /sys/fs/cgroup/*/"$DSEC_CGROUP_PARENT" /sys/fs/cgroup/unified/"$DSEC_CGROUP_PARENT" 2>/dev/null || true
[ ! -d "/sys/fs/cgroup/unified/$DSEC_CGROUP_PARENT" ] || fail "the cgroup parent is still there"
dsec-run create --layers netbox --id again --policy "$T/mirror.json" > /dev/null || fail "create again"
on_exit "dsec-run destroy --force again > /dev/null 2>&1"
egress_if again > /dev/null
attached=$(bpftool cgroup show "/sys/fs/cgroup/unified/$DSEC_CGROUP_PARENT/again" effective | grep -cE "connect4|sock_create")
[ "$attached" = 2 ] || fail "the programs are not in force on the new parent's sandbox"
[ "$(fetch again "http://$MIRROR:8080/mirror")" = mirror-ok ] || fail "again: mirror"
grep -q "not permitted" <<< "$(fetch again "http://$MIRROR:9000/")" || fail "again: port 9000 is not refused"
dsec-run destroy again > /dev/null || fail "destroy again"
assert_net_clean
echo ok
