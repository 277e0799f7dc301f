#!/bin/bash
# dsec-bench image: EROFS layer vs tar per sandbox vs cp -a, with time, bytes read and
# written and disk used for each.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-check.sh"

dsec-bench image -n 2 --warmup 1 --scale 0.02 --files 3 > "$T/out.jsonl"
check_bench image "$T/out.jsonl"
for v in dsec tar cp; do
    jq -e --arg v "$v" '.figures[$v + "_ms"].n == 2 and .figures[$v + "_read_bytes"].unit == "bytes"
        and .figures[$v + "_written_bytes"].n == 2 and .figures[$v + "_disk_bytes"].n == 2' "$T/out.jsonl" >/dev/null \
        || { cat "$T/out.jsonl" >&2; fail "image: $v not measured"; }
done
# A full copy per sandbox puts the whole image on disk; a layer's upper stays small.
jq -e '.figures.cp_disk_bytes.median >= .counts.image_bytes / 2
       and .figures.dsec_disk_bytes.median < .figures.cp_disk_bytes.median
       and .ratios["dsec/tar"].pairs == 2 and .ratios["dsec/cp"].pairs == 2' "$T/out.jsonl" >/dev/null \
    || { cat "$T/out.jsonl" >&2; fail "image: disk figures or ratios wrong"; }
check_clean
echo ok
