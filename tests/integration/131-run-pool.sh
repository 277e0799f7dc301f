#!/bin/bash
# run --pool: one-shot commands drawn from sandboxes made ahead. Each pooled sandbox
# serves one run and is destroyed after it; the pool refills in the background; another
# configuration gets another pool; a dead pooled sandbox is never drawn; what a killed
# process left (a claim, a half-made sandbox) is swept by the next fill and by gc; drain
# leaves nothing.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
on_exit 'dsec-run pool drain > /dev/null 2>&1; dsec-run ls | dsec-run destroy > /dev/null 2>&1'

host() { dsec-run run --pool "$@" -- cat /proc/sys/kernel/hostname; }
# Waits until no background teardown or refill is at work and every pool is full.
settle() {
    for _ in $(seq 300); do
        if dsec-run pool ls | jq -e -s 'all(.[]; .making == 0 and .claimed == 0 and .ready == .size)' > /dev/null; then
            return 0
        fi
        sleep 0.05
    done
    dsec-run pool ls >&2
    fail "the pools did not settle"
}
ready_ids() { dsec-run ls --label "dsec.pool=$1" -q | sort; }

# The first run finds no pool: its sandbox is made on the spot, then torn down, and the
# pool filled to 2 behind it.
first=$(host 2 --layers base)
[ -n "$first" ] || fail "no output from the first run"
settle
key=$(dsec-run pool ls | jq -r .key)
[ "$(dsec-run pool ls | jq -c '[.size, .ready, .stale]')" = "[2,2,0]" ] || fail "pool not filled: $(dsec-run pool ls)"
dsec-run inspect "$first" > /dev/null 2>&1 && fail "the first run's sandbox outlived it"
pooled=$(ready_ids "$key")
[ "$(wc -l <<<"$pooled")" = 2 ] || fail "expected 2 pooled sandboxes, got: $pooled"

# The next runs draw those, each once; nothing one run writes is seen by the next.
seen=""
for i in 1 2 3 4; do
    h=$(dsec-run run --pool 2 --layers base -- sh -c 'cat /tmp/mark 2>/dev/null && echo LEAK; echo x > /tmp/mark; cat /proc/sys/kernel/hostname')
    [[ $h != *LEAK* ]] || fail "run $i saw a file an earlier run wrote"
    [[ " $seen " != *" $h "* ]] || fail "sandbox $h served two runs"
    seen="$seen $h"
    [ "$i" = 1 ] && { grep -qx "$h" <<<"$pooled" || fail "run 1 did not draw a pooled sandbox ($h not in $pooled)"; }
    settle
done
for h in $seen; do dsec-run inspect "$h" > /dev/null 2>&1 && fail "drawn sandbox $h still exists"; done

# The exit status and output are the command's.
expect_exit 3 dsec-run run --pool 2 --layers base -- sh -c 'exit 3'
out=$(dsec-run run --pool 2 --layers base --json -- echo hi | jq -r .stdout)
[ "$out" = "hi" ] || fail "--json result: $out"
settle

# Other create options: another pool, not one of the first pool's sandboxes.
other=$(host 1 --layers base --pids 64)
grep -qx "$other" <<<"$(ready_ids "$key")" && fail "a run with --pids 64 drew from the plain pool"
settle
[ "$(dsec-run pool ls | jq -s length)" = 2 ] || fail "expected 2 pools: $(dsec-run pool ls)"

# A pooled sandbox whose init died is not drawn; it is destroyed and replaced.
victim=$(ready_ids "$key" | head -1)
kill -9 "$(dsec-run inspect "$victim" | jq -r .pid)"
for _ in 1 2; do
    h=$(host 2 --layers base)
    [ "$h" != "$victim" ] || fail "a sandbox whose init was killed was drawn"
    settle
done
dsec-run inspect "$victim" > /dev/null 2>&1 && fail "the dead pooled sandbox was not destroyed"

# A claim left by a process that died (SIGKILL between the draw and the teardown): the
# next fill sweeps it, destroying its sandbox, and fills up again.
pooldir=$DSEC_RUN/pools/$key
orphan=$(ready_ids "$key" | head -1)
mv "$pooldir/$orphan" "$pooldir/.claimed.$orphan.999999.1"
[ "$(dsec-run pool ls "$key" | jq .stale)" = 1 ] || fail "the orphaned claim is not counted as stale"
dsec-run pool fill -n 2 --layers base | jq -e '.ready == 2 and .stale == 0' > /dev/null || fail "fill did not sweep"
dsec-run inspect "$orphan" > /dev/null 2>&1 && fail "the orphaned claim's sandbox survived the sweep"

# A half-made one (its maker killed): gc destroys it.
orphan=$(ready_ids "$key" | head -1)
mv "$pooldir/$orphan" "$pooldir/.making.$orphan.999999.1"
dsec-reclaim gc --grace 0s > "$T/gc.jsonl"
jq -e -s --arg id "$orphan" 'any(.[]; .kind == "pool_stale" and .id == $id)' "$T/gc.jsonl" > /dev/null ||
    fail "gc did not report the stale pool entry: $(cat "$T/gc.jsonl")"
dsec-run inspect "$orphan" > /dev/null 2>&1 && fail "gc left the half-made pooled sandbox"

# Usage errors: no --id, no --keep; a missing layer; an unknown pool.
expect_exit 2 dsec-run run --pool 2 --id mine --layers base -- true
expect_exit 2 dsec-run run --pool 2 --keep --layers base -- true
dsec-run pool fill -n 1 --layers nosuch > "$T/err.jsonl" 2> /dev/null && fail "fill of a missing layer succeeded"
jq -e '.type == "error" and .code == "not_found"' "$T/err.jsonl" > /dev/null || fail "missing layer: $(cat "$T/err.jsonl")"
dsec-run pool ls 0123456789abcdef > "$T/err.jsonl" 2> /dev/null && fail "ls of an unknown pool succeeded"
jq -e '.code == "not_found"' "$T/err.jsonl" > /dev/null || fail "unknown pool: $(cat "$T/err.jsonl")"
expect_exit 2 dsec-run pool drain ../sandboxes

# Drain (gc made no new one: 1 + 1 left): every pooled sandbox destroyed, the pools gone, nothing running.
dsec-run pool drain > "$T/drain.jsonl"
[ "$(jq -s 'map(.destroyed) | add' "$T/drain.jsonl")" = 2 ] || fail "drain: $(cat "$T/drain.jsonl")"
[ -z "$(dsec-run ls -q)" ] || fail "sandboxes left after drain: $(dsec-run ls -q)"
[ -z "$(ls -A "$DSEC_RUN/pools")" ] || fail "pool directories left: $(ls -A "$DSEC_RUN/pools")"
echo "pool: drawn once each, refilled, swept, drained"
