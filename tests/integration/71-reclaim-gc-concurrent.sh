#!/bin/bash
# dsec-reclaim gc in a loop while `dsec-mount --count N | dsec-run create -P 2` runs (the
# layer not even mounted when it starts): every sandbox is created and works, gc touches
# none of them, and it still removes the debris planted beside them. Then the cost of a
# gc pass with N live sandboxes, and after destroy + gc nothing is left.
. "$(dirname "$0")/lib.sh"
# Whatever a failure leaves running goes (gc also takes what lost its state).
on_exit 'dsec-run ls 2> /dev/null | jq -r .id | xargs -r dsec-run destroy -f > /dev/null 2>&1; dsec-reclaim gc --grace 0s > /dev/null 2>&1'

n=${DSEC_TEST_SANDBOXES:-100}
make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
make_busybox_tree "$T/tree2"
echo debris > "$T/tree2/etc/debris"
dsec-layer build "$T/tree2" --name base2 > /dev/null

# Debris gc must find meanwhile: a sandbox whose init died.
dsec-run create --layers base2 --id debris > /dev/null
kill -9 "$(jq -r .pid "$DSEC_RUN/sandboxes/debris/state.json")"
[ -z "$(dsec-mount ls | jq -r 'select(.name == "base") | .name')" ] || fail "base is mounted before the batch"

dsec-layer ls base | dsec-mount --count "$n" | dsec-run create -P 2 > "$T/sandboxes.jsonl" 2> "$T/create.err" &
batch=$!
on_exit "kill -9 $batch 2> /dev/null"
passes=0
: > "$T/gc.jsonl"
while kill -0 $batch 2> /dev/null; do
    dsec-reclaim gc >> "$T/gc.jsonl" 2>> "$T/gc.err" || fail "gc failed: $(tail -3 "$T/gc.err")"
    passes=$((passes + 1))
done
wait $batch || fail "the batch create failed: $(head -3 "$T/create.err")"
[ "$passes" -ge 3 ] || fail "only $passes gc passes ran during the batch"

jq -se "length == $n and all(.type == \"sandbox\" and .state == \"running\")" "$T/sandboxes.jsonl" > /dev/null \
    || fail "batch create beside gc: $(grep -v '"sandbox"' "$T/sandboxes.jsonl" | head -3)"
touched=$(jq -r '.id // empty' "$T/gc.jsonl" | grep -vx debris | sort -u | head -3 || true)
[ -z "$touched" ] || fail "gc acted on sandboxes of the batch: $touched"
jq -se 'any(.id == "debris" and .kind == "dead_init")' "$T/gc.jsonl" > /dev/null || fail "gc did not remove the debris"
dsec-run exec -P 2 --json -- true < "$T/sandboxes.jsonl" | jq -se "length == $n and all(.exit_code == 0)" > /dev/null \
    || fail "exec into the batch after gc"

# The cost of a pass with n live sandboxes (nothing to remove).
start=$(date +%s%N)
out=$(dsec-reclaim gc)
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ -z "$out" ] || fail "a pass over live sandboxes removed: $out"

dsec-run destroy -P 2 < "$T/sandboxes.jsonl" > /dev/null
dsec-reclaim gc --grace 0s > /dev/null
[ -z "$(ls "$DSEC_RUN/sandboxes")" ] || fail "state left: $(ls "$DSEC_RUN/sandboxes" | head -3)"
[ -z "$(ls "$DSEC_ROOT/sandboxes")" ] || fail "uppers left: $(ls "$DSEC_ROOT/sandboxes" | head -3)"
! ls -d /sys/fs/cgroup/*/"$DSEC_CGROUP_PARENT" 2> /dev/null || fail "cgroups left"
[ -z "$(dsec-mount ls)" ] || fail "layer mounts left"
echo "ok: $n sandboxes created beside $passes gc passes; one pass over $n live sandboxes: ${ms} ms"
