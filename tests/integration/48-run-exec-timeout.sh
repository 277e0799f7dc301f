#!/bin/bash
# --timeout: the command's tree is killed, dsec-run exits 137 and says so on stderr
# ("dsec-run: timed out after 1s"), --json records timed_out; busy stdin or output does
# not keep the deadline from being checked.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id sb > /dev/null
on_exit "dsec-run destroy --force sb > /dev/null"

rc=0
timeout 30 dsec-run exec --timeout 1s sb -- sleep 30 2> "$T/err" || rc=$?
[ "$rc" = 137 ] || fail "--timeout: exit $rc, not 137"
grep -qx 'dsec-run: timed out after 1s' "$T/err" || fail "--timeout: stderr: $(cat "$T/err")"

rc=0
timeout 30 dsec-run exec --no-output-timeout 500ms sb -- sleep 30 2> "$T/err" || rc=$?
[ "$rc" = 137 ] || fail "--no-output-timeout: exit $rc"
grep -qx 'dsec-run: timed out after 500ms without output' "$T/err" || fail "--no-output-timeout: $(cat "$T/err")"

# Endless input and output keep poll busy; the deadline still holds.
rc=0
yes | timeout 30 dsec-run exec --timeout 1s sb -- cat > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 137 ] || fail "busy stdin: exit $rc"
rc=0
timeout 30 dsec-run exec --timeout 1s sb -- yes > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 137 ] || fail "busy stdout: exit $rc"

r=$(timeout 30 dsec-run exec --json --timeout 1s sb -- sleep 30 || true)
echo "$r" | jq -e '.timed_out == true and .exit_code == 137 and .signal == 9 and .note == "timed out after 1s"' > /dev/null \
    || fail "--json: $r"
echo ok
