#!/bin/bash
# Live change: an install stage opens a mirror, the test stage closes it. `dsec-guard net
# deny` switches the rules of the running sandbox and cuts its open connections to the
# mirror (the process inside sees its connection end); `net allow` opens it again, even
# for a sandbox created without egress; `apply` puts a policy's network rules in force.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net-lib.sh"

make_net_layer
start_mirror "dt87m$$" 198.18.87
egress_policy "$T/stage1.json" "$MIRROR/32=[8080,9000]"
dsec-run create --layers netbox --id stage --policy "$T/stage1.json" > /dev/null || fail "create"
on_exit "dsec-run destroy --force stage > /dev/null 2>&1"
egress_if stage > /dev/null

# Stage 1 (install): the mirror answers; a long connection stays open.
[ "$(fetch stage "http://$MIRROR:8080/mirror")" = mirror-ok ] || fail "stage 1: mirror"
hold_connection stage "$MIRROR" "$MIRROR_PID"

# Stage 2 (test): deny the mirror. The record says what is in force and what was cut.
out=$(dsec-guard net deny stage "$MIRROR") || fail "net deny: $out"
[ "$(jq -r .type <<< "$out")" = network ] || fail "net deny record: $out"
[ "$(jq -r '.network.allow | length' <<< "$out")" = 0 ] || fail "rules left after deny: $out"
[ "$(jq -r .cut <<< "$out")" -ge 1 ] || fail "no connection cut: $out"
got=$(fetch stage "http://$MIRROR:8080/mirror")
grep -q "not permitted" <<< "$got" || fail "stage 2: mirror still reachable: $got"
# The open connection is gone on both ends.
for _ in $(seq 100); do
    dsec-run exec stage -- cat /tmp/ended < /dev/null > /dev/null 2>&1 && break
    sleep 0.05
done
dsec-run exec stage -- cat /tmp/ended < /dev/null > /dev/null 2>&1 || fail "the connection inside was not cut"
n=$(nsenter --net=/proc/"$MIRROR_PID"/ns/net ss -Htn state established '( sport = :9000 )' | wc -l)
[ "$n" = 0 ] || fail "the mirror still holds $n connection(s)"
# The state says what is in force (inspect), so a fork or a reset gets the same.
[ "$(dsec-run inspect stage | jq -r '.guard.network.allow | length')" = 0 ] || fail "state not updated"

# Allow again, one port: 8080 works, 9000 does not.
out=$(dsec-guard net allow stage "$MIRROR,8080,tcp") || fail "net allow: $out"
[ "$(fetch stage "http://$MIRROR:8080/mirror")" = mirror-ok ] || fail "allowed again"
grep -q "not permitted" <<< "$(fetch stage "http://$MIRROR:9000/")" || fail "port 9000 is not allowed"
# Bad input: one line on stderr, an error record, nothing changed.
expect_exit 1 dsec-guard net deny stage 10.9.9.9 > "$T/out" 2> "$T/err"
[ "$(jq -r .code "$T/out")" = not_found ] || fail "deny of an unknown destination: $(cat "$T/out")"
[ "$(wc -l < "$T/err")" = 1 ] || fail "more than one line on stderr: $(cat "$T/err")"
expect_exit 1 dsec-guard net allow stage 10.0.0.1/8 > "$T/out" 2> /dev/null
[ "$(jq -r .code "$T/out")" = bad_input ] || fail "a bad destination: $(cat "$T/out")"
expect_exit 1 dsec-guard net allow no-such-box "$MIRROR" > /dev/null 2>&1
[ "$(fetch stage "http://$MIRROR:8080/mirror")" = mirror-ok ] || fail "a refused change changed something"

# apply: a policy's network part, here stage 1's again.
out=$(dsec-guard apply stage "$T/stage1.json") || fail "apply: $out"
[ "$(jq -r '.network.allow[0].ports | length' <<< "$out")" = 2 ] || fail "apply record: $out"
# apply refuses what it cannot change live.
echo '{"files": {"hidden": ["/etc"]}}' > "$T/files.json"
expect_exit 1 dsec-guard apply stage "$T/files.json" > "$T/out" 2> /dev/null
[ "$(jq -r .code "$T/out")" = unsupported ] || fail "apply with files: $(cat "$T/out")"

# A sandbox made without egress gets it live.
dsec-run create --layers netbox --id late > /dev/null || fail "create late"
on_exit "dsec-run destroy --force late > /dev/null 2>&1"
[ "$(fetch late "http://$MIRROR:8080/mirror")" != mirror-ok ] || fail "late reached the mirror before"
out=$(dsec-guard net allow late "$MIRROR,8080") || fail "net allow late: $out"
[ "$(jq -r .started <<< "$out")" = true ] || fail "late: $out"
egress_if late > /dev/null
[ "$(fetch late "http://$MIRROR:8080/mirror")" = mirror-ok ] || fail "late: mirror after allow"

dsec-run destroy stage late > /dev/null || fail "destroy"
assert_net_clean
echo ok
