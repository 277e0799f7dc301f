#!/bin/bash
# dsec-bench density: memory per sandbox by each kernel account, latency against alive,
# a plot with both; with --raise-limits, an interrupted run puts pid_max back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-check.sh"

dsec-bench density --count 12 -n 2 --warmup 1 --plot "$T/density.svg" > "$T/out.jsonl"
check_bench density "$T/out.jsonl"
jq -e '.counts.sandboxes == 12 and .counts.stopped_by == "count"
       and (.counts.memory_per_sandbox_bytes | .alive == 12 and .pss_init > 0 and .cgroup > 0
            and has("memavailable") and has("committed"))
       and (.memory_samples | length >= 2) and .limits_raised == []
       and .figures.create_ms_first.n >= 1 and .figures.create_ms_last.n >= 1
       and .ratios["last/first"].median > 0 and .ratios["last/first 1%"].median > 0
       and .figures.create_ms_first_1pct.n == 10
       and .figures.create_ms_at_10.n == 2 and .figures.create_ms_at_12.n == 2
       and .ratios["at_count/at_10"].median > 0
       and .figures.destroy_ms_at_10.n == 2 and .figures.destroy_ms_at_12.n == 2
       and .ratios["destroy_at_count/at_10"].median > 0 and .counts.destroyed_per_second > 0' "$T/out.jsonl" >/dev/null \
    || { cat "$T/out.jsonl" >&2; fail "density: wrong counts"; }
grep -q "<svg" "$T/density.svg" || fail "no SVG plot"

# SIGINT in the middle of a run that raised kernel.pid_max: limits restored, nothing left.
pid_max=$(cat /proc/sys/kernel/pid_max)
on_exit "echo $pid_max > /proc/sys/kernel/pid_max"
dsec-bench density --count 20000 --warmup 0 --raise-limits > "$T/int.jsonl" 2>"$T/int.err" &
bench=$!
for _ in $(seq 50); do
    [ "$(cat /proc/sys/kernel/pid_max)" != "$pid_max" ] && break
    sleep 0.1
done
[ "$(cat /proc/sys/kernel/pid_max)" -gt "$pid_max" ] || fail "pid_max was not raised"
sleep 1
kill -INT $bench
rc=0
wait $bench || rc=$?
[ "$rc" = 130 ] || { cat "$T/int.err" >&2; fail "expected exit 130 after SIGINT, got $rc"; }
[ "$(cat /proc/sys/kernel/pid_max)" = "$pid_max" ] || fail "pid_max not restored"
jq -e 'select(.type == "error") | .code == "interrupted"' "$T/int.jsonl" >/dev/null || fail "no interrupted record"
check_clean
echo ok
