#!/bin/bash
# Snapshot, fork and reset timings (the figures in README's "Snapshots" section):
#   - snapshot of a sandbox holding 10 MB and 200 MB of new files (random bytes), against
#     `tar | zstd -1` of the same upper directory;
#   - fork (--count 1) and reset of a sandbox, against a create from the same layers.
# Prints one JSON record per figure and a table on stderr.
#
#   sudo scripts/bench-snapshot.sh [ROUNDS]     (default 10 rounds of create/fork/reset)
#
# Everything lives in a temporary root and run directory in a private mount namespace.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${DSEC_BUILD_DIR:-$src/build}
rounds=${1:-10}
if [ "${DSEC_BENCH_NS:-}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "bench-snapshot: run as root" >&2; exit 2; }
    export DSEC_BENCH_NS=1
    exec unshare --mount --propagation private "$0" "$@"
fi
export PATH="$build:$PATH"
work=$(mktemp -d /tmp/dsec-bench-snap.XXXXXX)
export DSEC_ROOT="$work/root" DSEC_RUN="$work/run"
mkdir -p "$DSEC_ROOT" "$DSEC_RUN"
mount -t tmpfs -o mode=0755 dsec-bench-run "$DSEC_RUN"
cleanup() {
    dsec-run ls 2>/dev/null | dsec-run destroy --force > /dev/null 2>&1 || true
    dsec-mount release > /dev/null 2>&1 || true
    grep -o " $work[^ ]*" /proc/self/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
    rm -rf "$work"
    rmdir /sys/fs/cgroup/*/"dsec-$(printf %s "$DSEC_RUN" | sha256sum | cut -c1-12)" 2>/dev/null || true
}
trap cleanup EXIT

now_ms() { date +%s%N | awk '{printf "%.2f", $1 / 1e6}'; }
# median of the numbers on stdin
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
record() { jq -nc --arg what "$1" --argjson ms "$2" --argjson n "$3" '{type: "bench", v: 1, what: $what, ms: $ms, n: $n}'; }

tree="$work/base"
mkdir -p "$tree"/{bin,etc,work}
cp /bin/busybox "$tree/bin/"
for app in sh dd cat true sleep; do ln -s busybox "$tree/bin/$app"; done
dsec-layer build "$tree" --name base > /dev/null
dsec-run create --layers base --id warm > /dev/null  # layer mounted, seccomp cached

# The changes: random bytes (incompressible, the worst case for mkfs.erofs's lz4) and
# shared libraries (compressible), copied into the sandbox with dsec-run cp.
head -c 200M /dev/urandom > "$work/random"
(cd /usr/lib/x86_64-linux-gnu && tar -cf - . 2> /dev/null || true) | head -c 200M > "$work/libs"

run_all() {
for kind in random libs; do
    for mb in 10 200; do
        id="s-$kind-$mb"
        dsec-run create --layers base --id "$id" > /dev/null
        head -c "${mb}M" "$work/$kind" > "$work/data"
        dsec-run cp "$work/data" "$id:/work/data" > /dev/null
        for compress in lz4 none; do
            t0=$(now_ms)
            rec=$(dsec-run snapshot "$id" --compress "$compress")
            t1=$(now_ms)
            record "snapshot $kind ${mb}MB --compress $compress" "$(echo "$t1 - $t0" | bc)" 1
            jq -c --arg w "snapshot $kind ${mb}MB --compress $compress: frozen" \
                '{type: "bench", v: 1, what: $w, ms: .frozen_ms, n: 1, image_bytes: .size}' <<<"$rec"
        done
        # The same upper, from the page cache like the snapshot's.
        upper=$(dsec-run inspect "$id" | jq -r .rootfs.upper)
        t2=$(now_ms)
        tar -C "$upper" -cf - . | zstd -q -1 -T1 > "$work/$id.tar.zst"
        t3=$(now_ms)
        record "tar|zstd -1 $kind ${mb}MB" "$(echo "$t3 - $t2" | bc)" 1
        dsec-run destroy "$id" > /dev/null
    done
done

dsec-run create --layers base --id src > /dev/null
dsec-run exec src -- sh -c 'dd if=/dev/urandom of=/work/data bs=1M count=1 2>/dev/null'
# reset-ready: until its record is out (the new init ready); reset: until it exits (the
# old init gone and its upper removed).
for what in create fork reset-ready reset; do
    for _ in $(seq "$rounds"); do
        case $what in
            create) t0=$(now_ms); id=$(dsec-run create --layers base | jq -r .id); t1=$(now_ms) ;;
            fork) t0=$(now_ms); id=$(dsec-run fork src | jq -r .id); t1=$(now_ms) ;;
            reset) dsec-run exec src -- sh -c 'echo x > /work/x'; t0=$(now_ms); dsec-run reset src > /dev/null; t1=$(now_ms); id= ;;
            reset-ready)
                dsec-run exec src -- sh -c 'echo x > /work/x'
                t0=$(now_ms)
                t1=$(dsec-run reset src | { read -r _; now_ms; cat > /dev/null; })
                id= ;;
        esac
        echo "$t1 - $t0" | bc
        [ -z "$id" ] || dsec-run destroy "$id" > /dev/null
    done | median | xargs -I{} bash -c "$(declare -f record); record '$what' {} $rounds"
done
}
run_all | tee "$work/bench.jsonl"
echo >&2
jq -r '"\(.what)\t\(.ms) ms"' "$work/bench.jsonl" >&2
