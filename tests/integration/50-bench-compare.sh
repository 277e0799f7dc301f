#!/bin/bash
# dsec-bench compare: one bench record with dsec (made on the spot and drawn from a warm
# pool), bwrap and runc figures (or a reason why
# a tool is unavailable), ordered percentiles, per-pair ratios; nothing left behind.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/bench-check.sh"
dsec-bench compare -n 2 --warmup 1 --plot "$T/compare.svg" > "$T/out.jsonl"
[ "$(wc -l < "$T/out.jsonl")" = 1 ] || fail "expected one record"
check_bench compare "$T/out.jsonl"
# Every tool is either measured or says why not; dsec must be measured.
jq -e '.baselines | to_entries | all(.value.does.how and (.value.unavailable // "" | type == "string"))' "$T/out.jsonl" >/dev/null \
    || fail "a baseline without a description"
jq -e '.figures.dsec_ms.n == 2' "$T/out.jsonl" >/dev/null || fail "dsec was not measured"
# The warm pool too, against bwrap and against a sandbox made on the spot.
jq -e '.figures["dsec-pool_ms"].n == 2 and .ratios["dsec-pool/dsec"].pairs == 2' "$T/out.jsonl" >/dev/null ||
    fail "dsec-pool was not measured: $(jq -c '.baselines["dsec-pool"]' "$T/out.jsonl")"
for tool in bwrap runc; do
    jq -e --arg t "$tool" '(.baselines[$t].unavailable != null) or
        (.figures[$t + "_ms"].n == 2 and .ratios["dsec/" + $t].median > 0 and .ratios["dsec/" + $t].pairs == 2)' \
        "$T/out.jsonl" >/dev/null || fail "$tool neither measured with a ratio nor unavailable"
done
grep -q "<svg" "$T/compare.svg" || fail "no SVG plot"
# The benchmark's own state and mounts are gone; the test's DSEC_ROOT was not touched.
check_clean
echo ok
