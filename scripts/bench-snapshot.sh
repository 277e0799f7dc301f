#!/bin/bash
# Snapshot, fork and reset timings (the figures in README's "Snapshots" section):
#   - snapshot of a sandbox holding 10 MB and 200 MB of new files (random bytes), against
#     `tar | zstd -1` of the same upper directory;
#   - fork (--count 1) and reset of a sandbox (with and without a standby), against a
#     create from the same layers, and what a standby costs in memory.
# Prints one JSON record per figure and a table on stderr.
#
#   sudo scripts/bench-snapshot.sh [ROUNDS] [--resets]   (default 10 rounds of create/fork/reset;
#                                                       --resets: those and the standby's cost only)
#
# Everything lives in a temporary root and run directory in a private mount namespace.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${DSEC_BUILD_DIR:-$src/build}
rounds=${1:-10}
only_resets=${2:-}
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

# (bash's own clock: a `date | awk` per reading cost two processes, a few ms under load,
# which weighed most on the shortest figures)
now_ms() { local us=${EPOCHREALTIME/./}; printf '%d.%03d' $((us / 1000)) $((us % 1000)); }
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
[ "$only_resets" = --resets ] || for kind in random libs; do
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
# old init gone and its upper removed). reset-standby(-ready): the same with --standby,
# each reset swapping to the init the previous one left ready (and making the next one
# before it exits).
for what in create fork reset-ready reset reset-standby-ready reset-standby; do
    [ "$what" = reset-standby-ready ] && dsec-run reset --standby src > /dev/null
    for _ in $(seq "$rounds"); do
        case $what in
            reset-standby)
                dsec-run exec src -- sh -c 'echo x > /work/x'
                t0=$(now_ms); dsec-run reset --standby src > /dev/null; t1=$(now_ms); id= ;;
            reset-standby-ready)
                dsec-run exec src -- sh -c 'echo x > /work/x'
                t0=$(now_ms)
                t1=$(dsec-run reset --standby src | { read -r _; now_ms; cat > /dev/null; })
                id= ;;
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
standby_cost
}

# What a standby costs: its init's Pss and private memory, and the memory charge of a
# sandbox made with a standby against one made without (idle, a second after create;
# median of 5 pairs).
standby_cost() {
    local pid i diffs=()
    charge() {
        local mem
        mem=$(dsec-run inspect "$1" | jq -r '.cgroup.dirs[]' | grep -m1 memory || true)
        [ -n "$mem" ] || mem=$(dsec-run inspect "$1" | jq -r '.cgroup.dirs[-1]')
        cat "$mem/memory.usage_in_bytes" 2> /dev/null || cat "$mem/memory.current"
    }
    for i in 1 2 3 4 5; do
        dsec-run create --layers base --id "plain$i" > /dev/null
        dsec-run create --layers base --id "standby$i" --standby > /dev/null
        sleep 1
        diffs+=($(($(charge "standby$i") - $(charge "plain$i"))))
    done
    pid=$(dsec-run inspect standby1 | jq -r .standby.pid)
    # Pss shares the init's pages among every init alive; Private is what this one adds.
    jq -nc --argjson kb "$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup")" \
        '{type: "bench", v: 1, what: "standby init Pss", kib: $kb, n: 1}'
    jq -nc --argjson kb "$(awk '/^Private_(Clean|Dirty):/ {k += $2} END {print k}' "/proc/$pid/smaps_rollup")" \
        '{type: "bench", v: 1, what: "standby init Private", kib: $kb, n: 1}'
    jq -nc --argjson b "$(printf '%s\n' "${diffs[@]}" | median)" \
        '{type: "bench", v: 1, what: "standby cgroup charge", bytes: $b, n: 5}'
    for i in 1 2 3 4 5; do dsec-run destroy "plain$i" "standby$i" > /dev/null; done
}
run_all | tee "$work/bench.jsonl"
echo >&2
jq -r 'if .ms then "\(.what)\t\(.ms) ms" elif .kib then "\(.what)\t\(.kib) KiB" else "\(.what)\t\(.bytes) bytes" end' "$work/bench.jsonl" >&2
