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

# The record names the state directory's filesystem; ext4 without a journal (whose inode
# allocation skips recently freed inodes) is said on stderr too.
if command -v mkfs.ext4 >/dev/null; then
    truncate -s 64M "$T/nojournal.img"
    mkfs.ext4 -q -O ^has_journal "$T/nojournal.img"
    mkdir "$T/nj"
    if mount -o loop "$T/nojournal.img" "$T/nj"; then
        TMPDIR="$T/nj" dsec-bench create -n 1 -P 1 --warmup 0 > "$T/nj.jsonl" 2> "$T/nj.err"
        umount "$T/nj"
        jq -e '.machine.state_fs.type == "ext4" and .machine.state_fs.journal == false' "$T/nj.jsonl" >/dev/null \
            || { cat "$T/nj.jsonl" >&2; fail "create: no-journal ext4 not recorded"; }
        grep -q "ext4 without a journal" "$T/nj.err" || { cat "$T/nj.err" >&2; fail "no note of the missing journal"; }
    else
        echo "no loop device: the no-journal case is not checked"
    fi
    jq -e '.machine.state_fs.journal == null' "$T/out.jsonl" >/dev/null || jq -e '.machine.state_fs.type == "ext4"' "$T/out.jsonl" >/dev/null \
        || fail "journal given for a filesystem other than ext4"
fi
check_clean
echo ok
