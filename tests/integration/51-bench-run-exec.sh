#!/bin/bash
# dsec-bench run and exec: dsec against a plain fork/exec of the same binary, interleaved,
# with a ratio; exec's live sandboxes are destroyed at the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-check.sh"

# --pause: idle after each of the 6 runs (3 rounds of 2 variants), never inside a timing.
start=$(date +%s%N)
dsec-bench run -n 2 --warmup 1 --pause 300 > "$T/run.jsonl"
took_ms=$((($(date +%s%N) - start) / 1000000))
check_bench run "$T/run.jsonl"
jq -e '.figures.dsec_ms.n == 2 and .figures["fork-exec_ms"].n == 2 and .ratios["dsec/fork-exec"].median > 0' \
    "$T/run.jsonl" >/dev/null || fail "run: no dsec and fork-exec figures with a ratio"
jq -e '.counts.pause_ms == 300 and .figures["fork-exec_ms"].max < 300' "$T/run.jsonl" > /dev/null ||
    fail "run: the pause is not in the record, or in a timing: $(jq -c '[.counts, .figures["fork-exec_ms"].max]' "$T/run.jsonl")"
[ "$took_ms" -ge 1800 ] || fail "run --pause 300: 6 runs took only $took_ms ms in all"

dsec-bench exec -n 3 --warmup 1 --count 2 --plot "$T/exec.svg" > "$T/exec.jsonl"
check_bench exec "$T/exec.jsonl"
jq -e '.counts.live_sandboxes == 2 and .figures.dsec_ms.n == 3 and .ratios["dsec/fork-exec"].pairs == 3
       and .counts.batch_execs == 20 and .figures["dsec-batch_ms"].n == 3
       and .ratios["dsec-batch/fork-exec"].pairs == 3 and .ratios["dsec/dsec-batch"].median > 0' \
    "$T/exec.jsonl" >/dev/null || { cat "$T/exec.jsonl" >&2; fail "exec: wrong counts"; }
grep -q "<svg" "$T/exec.svg" || fail "no SVG plot"
check_clean
echo ok
