#!/bin/bash
# dsec-bench create: create latency percentiles and sandboxes per second at -P 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-check.sh"

dsec-bench create -n 3 -P 2 --warmup 1 > "$T/out.jsonl"
check_bench create "$T/out.jsonl"
jq -e '.counts.sandboxes == 3 and .counts.parallel == 2 and .counts.created_per_second > 0
       and .counts.destroyed_per_second > 0 and .figures.create_ms.n == 3' "$T/out.jsonl" >/dev/null \
    || { cat "$T/out.jsonl" >&2; fail "create: wrong counts"; }
# The pipeline form is measured when dsec-mount is built, and says so when not.
jq -e '(.counts.batch_created_per_second > 0) or (.baselines["dsec-batch"].unavailable != null)' "$T/out.jsonl" >/dev/null \
    || fail "create: batch neither measured nor unavailable"
check_clean
echo ok
