#!/bin/bash
# Crash test: dsec-mount and dsec-run killed with SIGKILL at random points during create,
# exec, cp and destroy, many times over; then one gc pass, and nothing is left of what
# died (state, uppers, cgroups, id ranges, processes, layer mounts), while the sandboxes
# that were not being destroyed still work and keep their files.
. "$(dirname "$0")/lib.sh"
# Whatever a failure leaves running goes (gc also takes what lost its state).
on_exit 'dsec-run ls 2> /dev/null | jq -r .id | xargs -r dsec-run destroy -f > /dev/null 2>&1; dsec-reclaim gc --grace 0s > /dev/null 2>&1'

rounds=${DSEC_TEST_ROUNDS:-25}
make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
for s in keep1 keep2; do
    dsec-run create --layers base --id $s > /dev/null
    dsec-run exec $s -- sh -c "echo $s > /root/mark"
done
head -c 2000000 /dev/urandom > "$T/payload"
mounts_before=$(grep -c " $T" /proc/self/mounts || true)

# Kills `$@` (started in the background) after a random 0-400 ms.
kill_soon() {
    "$@" > /dev/null 2>&1 &
    local pid=$!
    sleep "0.$(printf %03d $((RANDOM % 400)))"
    kill -9 $pid 2> /dev/null || true
    wait $pid 2> /dev/null || true
}

for ((i = 0; i < rounds; i++)); do
    kill_soon dsec-mount --count 3 base
    dsec-mount --count 3 base > "$T/r.jsonl"
    kill_soon sh -c "exec dsec-run create -P 2 < '$T/r.jsonl'"
    # Whatever that create made, half made or never began: exec, cp and destroy, each cut short.
    victim=$(dsec-run ls | jq -r 'select(.state == "running" and (.id | startswith("keep") | not)) | .id' | head -1)
    [ -n "$victim" ] || continue
    kill_soon dsec-run exec "$victim" -- sh -c 'echo x > /root/f; sleep 1'
    kill_soon dsec-run cp "$T/payload" "$victim:/root/payload"
    kill_soon dsec-run destroy "$victim"
done
# The uppers of rootfs records whose create never came are debris as well.
dsec-reclaim gc --grace 0s > "$T/gc.jsonl" || fail "gc: $(grep '"error"' "$T/gc.jsonl" | head -3)"
echo "gc after $rounds rounds: $(jq -sr 'group_by(.kind) | map("\(.[0].kind)=\(length)") | join(" ")' "$T/gc.jsonl")"

# What survived works; the rest is destroyed like any sandbox.
for s in keep1 keep2; do
    [ "$(dsec-run exec $s -- cat /root/mark)" = $s ] || fail "$s lost its files or stopped working"
done
for id in $(dsec-run ls | jq -r .id); do
    dsec-run exec "$id" -- true || fail "sandbox $id survived gc but does not work"
    dsec-run destroy "$id" > /dev/null || fail "destroy $id"
done
dsec-reclaim gc --grace 0s > /dev/null
[ -z "$(ls -A "$DSEC_RUN/sandboxes")" ] || fail "state left: $(ls "$DSEC_RUN/sandboxes" | head -3)"
[ -z "$(ls -A "$DSEC_ROOT/sandboxes")" ] || fail "uppers left: $(ls "$DSEC_ROOT/sandboxes" | head -3)"
[ -z "$(ls "$DSEC_RUN/userns" | grep -v '^\.lock$' || true)" ] || fail "id ranges left"
! ls -d /sys/fs/cgroup/*/"$DSEC_CGROUP_PARENT" 2> /dev/null || fail "cgroups left"
[ -z "$(dsec-mount ls)" ] || fail "layer mounts left: $(dsec-mount ls | jq -c .)"
[ "$(grep -c " $T" /proc/self/mounts || true)" -le "$mounts_before" ] || fail "mounts left: $(grep " $T" /proc/self/mounts)"
echo "ok: $rounds rounds of kills, nothing left"
