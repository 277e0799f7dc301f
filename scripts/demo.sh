#!/bin/bash
# The main job on an embedded default: installs what is missing, builds, then makes a
# small base layer from a busybox tree and a toolkit layer, mounts the stack, launches a
# batch of sandboxes, runs a command in each, prints a summary and destroys them.
#
#   sudo scripts/demo.sh [COUNT]        (COUNT sandboxes, default 20)
#
# Everything it makes lives in a temporary root and run directory, in a private mount
# namespace, and is removed at the end.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${DSEC_BUILD_DIR:-$src/build}
count=${1:-20}

if [ "${DSEC_DEMO_NS:-}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "demo: run as root (namespaces, mounts, cgroups)" >&2; exit 2; }
    "$src/scripts/install-deps.sh"
    "$src/scripts/build.sh" >/dev/null
    export DSEC_DEMO_NS=1
    exec unshare --mount --propagation private "$0" "$@"
fi

export PATH="$build:$PATH"
work=$(mktemp -d /tmp/dsec-demo.XXXXXX)
export DSEC_ROOT="$work/root" DSEC_RUN="$work/run"
mkdir -p "$DSEC_RUN"
mount -t tmpfs -o mode=0755 dsec-demo-run "$DSEC_RUN"
cleanup() {
    [ -s "$work/sandboxes.jsonl" ] && dsec-run destroy < "$work/sandboxes.jsonl" >/dev/null 2>&1 || true
    dsec-mount release >/dev/null 2>&1 || true
    umount -R "$DSEC_RUN" 2>/dev/null || true
    # The sandboxes' cgroup parent belongs to this run directory (see dsec-run(1)).
    rmdir /sys/fs/cgroup/*/"dsec-$(printf %s "$DSEC_RUN" | sha256sum | cut -c1-12)" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
say() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

say "1. a base layer from a busybox tree, and a toolkit layer on top"
tree="$work/tree"
mkdir -p "$tree"/{bin,etc,tmp,proc,sys,dev,root,work}
cp /bin/busybox "$tree/bin/busybox"
for app in $("$tree/bin/busybox" --list); do [ "$app" = busybox ] || ln -s busybox "$tree/bin/$app"; done
echo "root:x:0:0:root:/root:/bin/sh" > "$tree/etc/passwd"
echo "root:x:0:" > "$tree/etc/group"
dsec-layer build "$tree" --name demo-base --label demo=1 | jq -c '{name, digest: .digest[0:19], files, size}'
mkdir -p "$work/tools/opt/demo"
cat > "$work/tools/opt/demo/report" <<'SH'
#!/bin/sh
echo "$(hostname) pid=$$ uid=$(id -u) root=$(ls / | wc -l) entries"
SH
chmod +x "$work/tools/opt/demo/report"
dsec-layer build "$work/tools" --name demo-tools --label demo=1 | jq -c '{name, digest: .digest[0:19], files, size}'
dsec-layer ls label=demo=1 | jq -c '{name, digest: .digest[0:19]}'

say "2. the stack, mounted once for the host"
dsec-layer ls demo-base demo-tools | dsec-mount --count "$count" > "$work/rootfs.jsonl"
dsec-mount ls | jq -c '{name, path, users}'

say "3. $count sandboxes, created in parallel"
start=$(date +%s%N)
dsec-run create -P 4 --memory 256M --pids 256 --label demo=1 < "$work/rootfs.jsonl" > "$work/sandboxes.jsonl"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "created $(jq -s 'map(select(.type == "sandbox")) | length' "$work/sandboxes.jsonl") sandboxes in ${ms} ms" >&2
dsec-mount ls | jq -c '{name, users}'

say "4. a command in each"
dsec-run exec -P 4 --json -- /opt/demo/report < "$work/sandboxes.jsonl" > "$work/results.jsonl"
head -3 "$work/results.jsonl" | jq -c '{id, exit_code, stdout, stderr, duration_ms}'

say "5. summary"
jq -s '{sandboxes: length,
        ok: map(select(.exit_code == 0)) | length,
        failed: map(select(.exit_code != 0)) | length,
        median_exec_ms: (map(.duration_ms) | sort | .[length / 2 | floor])}' "$work/results.jsonl"

say "6. destroyed"
dsec-run destroy < "$work/sandboxes.jsonl" | jq -s '{destroyed: length}'
: > "$work/sandboxes.jsonl"
