#!/bin/bash
# Large input is relayed intact, through the pipe's partial writes and the relay's
# buffer, and large output comes back intact at the same time (no deadlock between them).
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id sb > /dev/null
on_exit "dsec-run destroy --force sb > /dev/null"

head -c 10M /dev/urandom > "$T/big"
got=$(timeout 60 dsec-run exec sb -- wc -c < "$T/big") || fail "wc -c: exit $?"
[ "$got" = 10485760 ] || fail "wc -c counted $got"
got=$(cat "$T/big" | timeout 60 dsec-run exec sb -- cat | wc -c) || fail "cat | wc -c: exit $?"
[ "$got" = 10485760 ] || fail "cat | wc -c counted $got"
# Byte for byte, in and out.
timeout 60 dsec-run exec sb -- cat < "$T/big" | cmp - "$T/big" || fail "cat changed the data"
want=$(sha256sum < "$T/big" | cut -d' ' -f1)
r=$(timeout 60 dsec-run exec --json -i sb -- busybox sha256sum < "$T/big") || fail "--json -i: exit $?"
[ "$(echo "$r" | jq -r '.stdout | split(" ")[0]')" = "$want" ] || fail "--json -i: checksum differs: $r"
echo ok
