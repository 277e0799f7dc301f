#!/bin/bash
# Soak under faults: N workers run sandbox lifecycles (create, exec short and long
# commands, ptys, cp both ways, snapshot, fork, reset, destroy) for a while, as root,
# while faults are injected: the uppers' and the run directory's filesystems full, a
# sandbox's --disk filled, descriptors exhausted (a low ulimit -n for some invocations),
# sandbox processes taken by the OOM killer (--memory and a memory hog inside), layer
# mounts unmounted (lazily) under live sandboxes, SIGKILL to dsec-run, dsec-mount and
# sandbox inits at random moments. Every operation runs under a watchdog and its outcome
# is classified: ok, its error record's code, killed (by us), or one of the causes that
# fail the soak: hang, no_record, crash, corrupt_state, wrong_output. At the end gc runs
# and nothing may be left (mounts, cgroups, processes, descriptors, uppers, state, id
# ranges), and every sandbox that survived must still run a command.
#
#   sudo scripts/soak.sh [--short] [-P N] [--duration 15m] [--cycles N] [--faults LIST]
#
# Writes one soak record (JSON) on stdout and a summary on stderr; exits 1 when a
# failing cause or a leak was seen. Everything lives in a temporary root and run
# directory (--work) in a private mount namespace, and is removed on exit (Ctrl-C too).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
soak_lib="$src/scripts/soak"

usage() {
    cat <<'EOF'
usage: soak.sh [OPTIONS]
  --short            a short run (30 s, 8 workers, faults more often): the test suite's
  -P, --parallel N   workers, each running sandbox lifecycles one after another (16)
  --duration D       stop starting cycles after D (e.g. 90s, 15m, 2h; default 10m)
  --cycles N         stop after N cycles in all (whichever comes first)
  --faults LIST      comma list of: root_full, run_full, disk, fds, oom, umount, kill,
                     init, gc (default: all); none for a run without faults
  --op-timeout S     watchdog per operation in seconds (60; snapshot and fork twice)
  --seed N           random seed (default: from the clock)
  --work DIR         where the soak's directory (temporary root and run directory)
                     is made (default /tmp); it is removed at the end
  --keep             keep --work (its files: outcomes, faults, the soak record)
example:
  sudo scripts/soak.sh --short > soak.json
  sudo nice scripts/soak.sh -P 16 --duration 15m | jq .failures
EOF
}

short=0 workers=16 duration=600 cycles=0 faults=all op_timeout=60 seed="" work="" keep=0
seconds_of() {  # 90, 90s, 15m, 2h -> seconds
    case $1 in
    *h) echo $((${1%h} * 3600)) ;; *m) echo $((${1%m} * 60)) ;; *s) echo "${1%s}" ;; *) echo "$1" ;;
    esac
}
args=("$@")
while [ $# -gt 0 ]; do
    case $1 in
    --short) short=1 ;;
    -P | --parallel) workers=$2; shift ;;
    --duration) duration=$(seconds_of "$2"); shift ;;
    --cycles) cycles=$2; shift ;;
    --faults) faults=$2; shift ;;
    --op-timeout) op_timeout=$2; shift ;;
    --seed) seed=$2; shift ;;
    --work) work=$2; shift ;;
    --keep) keep=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "soak: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
[[ "$workers" =~ ^[1-9][0-9]*$ && "$duration" =~ ^[0-9]+$ && "$cycles" =~ ^[0-9]+$ && "$op_timeout" =~ ^[1-9][0-9]*$ ]] \
    || { echo "soak: -P, --duration, --cycles and --op-timeout take numbers" >&2; exit 2; }
if [ $short = 1 ]; then
    # Given explicitly, -P and --duration still win (they were parsed above).
    [[ " ${args[*]} " == *" -P "* || " ${args[*]} " == *" --parallel "* ]] || workers=8
    [[ " ${args[*]} " == *" --duration "* ]] || duration=30
fi

# A private mount namespace: every mount made here goes with it.
if [ "${DSEC_SOAK_NS:-}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "soak: run as root (namespaces, mounts, cgroups)" >&2; exit 2; }
    export DSEC_SOAK_NS=1
    exec unshare --mount --propagation private bash "$0" "${args[@]}"
fi

bin=${DSEC_BIN:-${DSEC_BUILD_DIR:-$src/build}}
[ -x "$bin/dsec-run" ] || { echo "soak: no dsec-run in $bin (build first, or set DSEC_BIN)" >&2; exit 2; }
export PATH="$bin:$PATH"
for tool in jq busybox script timeout fallocate; do
    command -v $tool > /dev/null || { echo "soak: $tool is needed" >&2; exit 2; }
done
[ -n "$seed" ] || seed=$((10#$(date +%N) % 32768))

mkdir -p "${work:=/tmp}"
work=$(mktemp -d "$(cd "$work" && pwd)/dsec-soak.XXXXXX")
export DSEC_ROOT="$work/root" DSEC_RUN="$work/run"
unset DSEC_STORE
cg_parent="dsec-$(printf %s "$DSEC_RUN" | sha256sum | cut -c1-12)"

# shellcheck source=scripts/soak/ops.sh
. "$soak_lib/ops.sh"
# shellcheck source=scripts/soak/faults.sh
. "$soak_lib/faults.sh"
# shellcheck source=scripts/soak/check.sh
. "$soak_lib/check.sh"

children=()
status_file="$work/status"
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    touch "$work/stop"
    local pid
    for pid in "${children[@]}"; do kill -KILL "$pid" 2> /dev/null || true; done
    wait 2> /dev/null || true
    # What the workers had started (dsec-run, timeout, script...) is ours: every other
    # process of this mount namespace. Stopped (dsec-run cleans up on SIGTERM), then killed,
    # so that nothing creates a sandbox after the sweep below.
    local ours=()
    mapfile -t ours < <(pgrep --ns $$ --nslist mnt | grep -vx "$$")
    if [ ${#ours[@]} -gt 0 ]; then
        kill -TERM "${ours[@]}" 2> /dev/null || true
        sleep 1
        kill -KILL "${ours[@]}" 2> /dev/null || true
    fi
    rm -f "$DSEC_ROOT/ballast" "$DSEC_RUN/ballast"
    dsec-run ls 2> /dev/null | dsec-run destroy -f > /dev/null 2>&1 || true
    dsec-reclaim gc --grace 0s > /dev/null 2>&1 || true
    dsec-mount release > /dev/null 2>&1 || true
    grep -o " ${work}[^ ]*" /proc/self/mounts | sort -r | while read -r m; do umount -l "$m" 2> /dev/null || true; done
    rmdir /sys/fs/cgroup/*/"$cg_parent" /sys/fs/cgroup/"$cg_parent" 2> /dev/null || true
    if [ $keep = 1 ]; then
        echo "soak: kept $work" >&2
    else
        rm -rf "$work"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'echo "soak: interrupted" >&2; exit 130' INT TERM

# Small filesystems of their own, so that filling them is cheap: the root (layers and
# uppers) and the run directory (state, locks, logs, layer mounts).
mkdir -p "$DSEC_ROOT" "$DSEC_RUN" "$work/out" "$work/ops"
mount -t tmpfs -o size=512M,mode=0755 dsec-soak-root "$DSEC_ROOT"
mount -t tmpfs -o size=64M,mode=0755 dsec-soak-run "$DSEC_RUN"

# A base layer from a busybox tree, every applet linked (as scripts/demo.sh does).
tree="$work/tree"
mkdir -p "$tree"/{bin,etc,tmp,proc,sys,dev,root}
cp /bin/busybox "$tree/bin/"
"$tree/bin/busybox" --list | grep -vx busybox | while read -r app; do ln -s busybox "$tree/bin/$app"; done
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$tree/etc/passwd"
printf 'root:x:0:\n' > "$tree/etc/group"
dsec-layer build "$tree" --name soak-base > /dev/null
# What cp moves in: a few small files and one of 1 MiB.
mkdir -p "$work/payload/sub"
head -c 1048576 /dev/urandom > "$work/payload/big"
for i in 1 2 3 4 5; do echo "file $i" > "$work/payload/sub/f$i"; done

# The host before: mounts under $work once a sandbox came and went (the run directory's
# own mounts are made by the first create).
warm=$(dsec-run create --layers soak-base | jq -r .id)
dsec-run exec "$warm" -- true
dsec-run destroy "$warm" > /dev/null
dsec-reclaim gc --grace 0s > /dev/null
mounts_before=$(mounts_under "$work")

# Sandboxes that live through the whole soak, each with a file to find at the end.
keepers=$((workers < 4 ? workers : 4))
for ((k = 0; k < keepers; k++)); do
    dsec-run create --layers soak-base --id "keep$k" > /dev/null
    dsec-run exec "keep$k" -- sh -c "echo keep$k > /root/mark"
done

export work keepers op_timeout faults seed status_file
kill_pct=3 fd_pct=3 fault_every=3
[ $short = 1 ] && kill_pct=8 fd_pct=6 fault_every=1
export kill_pct fd_pct fault_every

echo "soak: $workers workers, ${duration}s$([ "$cycles" -gt 0 ] && echo ", $cycles cycles"), faults: $faults, seed $seed, in $work" >&2
start=$EPOCHSECONDS
deadline=$((start + duration))
per_worker=0
[ "$cycles" -gt 0 ] && per_worker=$(((cycles + workers - 1) / workers))
for ((w = 0; w < workers; w++)); do
    worker "$w" "$deadline" "$per_worker" &
    children+=($!)
done
fault_loop "$deadline" &
children+=($!)
listing_loop "$deadline" &
children+=($!)
for ((w = 0; w < workers; w++)); do wait "${children[$w]}" || true; done
touch "$work/stop"
wait "${children[@]:$workers}" || true
elapsed=$((EPOCHSECONDS - start))

# The end: faults lifted, gc, then what survived must work and nothing may be left.
rm -f "$DSEC_ROOT/ballast" "$DSEC_RUN/ballast"
final_checks
report "$elapsed"
