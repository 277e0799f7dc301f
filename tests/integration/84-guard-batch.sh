#!/bin/bash
# A batch created in parallel (dsec-run create -P 4: the policy's mounts are made from
# children forked by a multi-threaded dsec-run) gets the whole policy in every sandbox.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/base"
mkdir -p "$T/base/answers" "$T/base/work"
echo secret > "$T/base/answers/ref.txt"
dsec-layer build "$T/base" --name base > /dev/null
on_exit 'dsec-run ls | jq -r .id | xargs -r dsec-run destroy --force > /dev/null'
dsec-layer ls base | dsec-mount --count 8 \
    | dsec-run create -P 4 --policy "$DSEC_SRC/examples/policies/eval.json" > "$T/out" || fail "batch create"
[ "$(wc -l < "$T/out")" = 8 ] || fail "expected 8 sandboxes: $(cat "$T/out")"
while read -r id; do
    [ -z "$(dsec-run exec "$id" -- ls -A /answers)" ] || fail "$id: /answers is not hidden"
    if dsec-run exec "$id" -- touch /etc/x 2> /dev/null; then fail "$id: / is writable"; fi
    dsec-run exec "$id" -- touch /work/x || fail "$id: /work is not writable"
    [ "$(dsec-run inspect "$id" | jq -r .limits.pids)" = 512 ] || fail "$id: pids limit"
done < <(jq -r .id "$T/out")
echo ok
