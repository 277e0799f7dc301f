#!/bin/bash
# dsec-bench import: dsec-layer import against tar -xf + mkfs.erofs, with a ratio.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-check.sh"

dsec-bench import -n 1 --warmup 0 --scale 0.01 > "$T/out.jsonl"
check_bench import "$T/out.jsonl"
jq -e '.counts.tar_bytes > 0 and .figures["tar+mkfs.erofs_ms"].n == 1
       and (.baselines.dsec.unavailable != null or .ratios["dsec/tar+mkfs.erofs"].median > 0)' "$T/out.jsonl" >/dev/null \
    || { cat "$T/out.jsonl" >&2; fail "import: wrong figures"; }
jq -e '.figures.dsec_ms.n == 1' "$T/out.jsonl" >/dev/null || fail "import: dsec-layer import not measured"
check_clean
echo ok
