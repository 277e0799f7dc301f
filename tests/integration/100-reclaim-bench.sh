#!/bin/bash
# dsec-bench reclaim, small: 6 sandboxes touch 4 MiB each (half of it alike); the record
# has memory as created, KSM-merged and paused, with paused well under created; first
# exec after a pause and gc figures; KSM's knobs and the swap are as they were after it,
# and nothing is left. A --keep-free the host cannot give makes no sandbox at all; a
# SIGINT mid-run leaves nothing either.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-check.sh"

ksm=/sys/kernel/mm/ksm
[ -e /sys/block/zram0 ] || skip "no zram device"
grep -qE '^(/dev)?/zram0 ' /proc/swaps && skip "/dev/zram0 is in use as swap already"
[ "$(cat /sys/block/zram0/disksize)" = 0 ] || skip "/dev/zram0 is set up already"
[ -w $ksm/run ] || skip "the kernel has no KSM"
knobs() { echo "$(cat $ksm/run) $(cat $ksm/pages_to_scan) $(cat $ksm/sleep_millisecs)"; }
read -r run0 scan0 sleep0 <<< "$(knobs)"
# A failed run must not leave the host's KSM or swap changed.
on_exit "echo $scan0 > $ksm/pages_to_scan; echo $sleep0 > $ksm/sleep_millisecs; echo $run0 > $ksm/run"
on_exit "dsec-reclaim swap --off > /dev/null 2>&1"

dsec-bench reclaim --count 6 --touch 4M --ksm-wait 60 > "$T/out.jsonl"
check_bench reclaim "$T/out.jsonl"
jq -e '.counts | .sandboxes == 6 and .stopped_by == "count" and .touch_bytes == 4194304
       and .shared_bytes == 2097152 and .fill == "text"' "$T/out.jsonl" > /dev/null \
    || { cat "$T/out.jsonl" >&2; fail "wrong counts"; }
# Each sandbox's cgroup was charged at least what it touched.
jq -e '.memory.created.cgroup_charge >= 6 * 4194304 and .memory.created.zram_used < 1048576' "$T/out.jsonl" > /dev/null \
    || { jq -c .memory "$T/out.jsonl" >&2; fail "the sandboxes did not hold what they touched"; }
jq -e '.idle.paused == 6 and .memory.paused.held < 0.5 * .memory.created.held
       and .ratios["paused/created"].held < 0.5' "$T/out.jsonl" > /dev/null \
    || { jq -c '.memory, .idle' "$T/out.jsonl" >&2; fail "pausing gave back too little"; }
# KSM merged the shared halves (3 of the 6 x 2 MiB are enough to call it merged).
jq -e '.ksm.status.pages_sharing * 4096 >= 5 * 1048576 and .memory.ksm_merged.held < .memory.created.held
       and .ksm.settings_used.pages_to_scan == 4000' "$T/out.jsonl" > /dev/null \
    || { jq -c '.ksm, .memory' "$T/out.jsonl" >&2; fail "KSM merged nothing"; }
jq -e '.figures.first_exec_after_pause_ms.n == 6 and .figures.exec_running_ms.n == 6
       and .figures.gc_pass_ms.n == 3' "$T/out.jsonl" > /dev/null || fail "latency or gc figures missing"
[ "$(knobs)" = "$run0 $scan0 $sleep0" ] || fail "KSM settings not restored: $(knobs), were $run0 $scan0 $sleep0"
grep -qE '^(/dev)?/zram0 ' /proc/swaps && fail "the zram swap was left on"
[ "$(cat /sys/block/zram0/disksize)" = 0 ] || fail "the zram device was left set up"

# The random fill: it does not compress, so zram holds nearly all of what it stores.
dsec-bench reclaim --count 2 --touch 2M --fill random --no-ksm > "$T/random.jsonl"
jq -e '.counts.fill == "random" and .ksm.unavailable == "--no-ksm" and (.memory | has("ksm_merged") | not)
       and .idle.paused == 2' "$T/random.jsonl" > /dev/null || { cat "$T/random.jsonl" >&2; fail "random fill"; }

# The host guard: nothing fits under this floor, so no sandbox is made; an error says so.
rc=0
dsec-bench reclaim --count 2 --keep-free 100000G > "$T/guard.jsonl" 2> "$T/guard.err" || rc=$?
[ "$rc" = 1 ] || fail "expected exit 1 when nothing fits, got $rc"
jq -e 'select(.type == "error") | .code == "exhausted"' "$T/guard.jsonl" > /dev/null || fail "no exhausted record"
# (Besides the note a host whose /tmp is ext4 without a journal gets from every run.)
[ "$(grep -vc "without a journal" "$T/guard.err")" = 1 ] || { cat "$T/guard.err" >&2; fail "expected one error line"; }
[ "$(knobs)" = "$run0 $scan0 $sleep0" ] || fail "KSM settings not restored after the guard stopped it"
grep -qE '^(/dev)?/zram0 ' /proc/swaps && fail "the zram swap was left on after the guard stopped it"

# SIGINT in the middle of a run, once its zram swap is on: exit 130, KSM's knobs and the
# swap as they were, every sandbox gone.
dsec-bench reclaim --count 40 --touch 4M > "$T/int.jsonl" 2> "$T/int.err" &
bench=$!
for _ in $(seq 100); do
    grep -qE '^(/dev)?/zram0 ' /proc/swaps && break
    sleep 0.1
done
grep -qE '^(/dev)?/zram0 ' /proc/swaps || fail "the interrupted run set up no zram swap"
sleep 2
kill -INT $bench
rc=0
wait $bench || rc=$?
[ "$rc" = 130 ] || { cat "$T/int.err" >&2; fail "expected exit 130 after SIGINT, got $rc"; }
jq -e 'select(.type == "error") | .code == "interrupted"' "$T/int.jsonl" > /dev/null || fail "no interrupted record"
[ "$(knobs)" = "$run0 $scan0 $sleep0" ] || fail "KSM settings not restored after SIGINT"
grep -qE '^(/dev)?/zram0 ' /proc/swaps && fail "the zram swap was left on after SIGINT"
[ "$(cat /sys/block/zram0/disksize)" = 0 ] || fail "the zram device was left set up after SIGINT"
check_clean
echo ok
