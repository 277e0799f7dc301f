#!/bin/bash
# dsec-mount ls shows users derived from live sandboxes' state; release refuses used layers.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/base"
mkdir -p "$T/task/work" && echo t > "$T/task/work/t"
base=$(dsec-layer build "$T/base" --name base | jq -r .digest)
task=$(dsec-layer build "$T/task" --name task | jq -r .digest)
[ -z "$(dsec-mount ls)" ] || fail "ls before any mount"
dsec-mount base >/dev/null
rootfs=$(dsec-mount base task)

ls=$(dsec-mount ls)
[ "$(wc -l <<<"$ls")" = 2 ] || fail "ls: $ls"
[ "$(jq -r 'select(.name=="base") | .image' <<<"$ls")" = "$DSEC_ROOT/layers/${base#sha256:}.erofs" ] || fail "image"
[ "$(jq -r 'select(.name=="task") | .path' <<<"$ls")" = "$DSEC_RUN/layers/${task#sha256:}" ] || fail "path"
[ "$(jq -r .users <<<"$ls" | sort -u)" = 0 ] || fail "users without sandboxes"

# A live sandbox (state as dsec-run writes it) using base and task; a dead one using base.
sleep 300 & live=$!
on_exit "kill $live"
start=$(awk '{print $22}' "/proc/$live/stat")
id=$(jq -r .id <<<"$rootfs")
mkdir -p "$DSEC_RUN/sandboxes/$id" "$DSEC_RUN/sandboxes/dead"
jq -c --argjson pid "$live" --argjson st "$start" '{type:"sandbox",v:1,id:.id,pid:$pid,pid_start:$st,rootfs:.}' \
    <<<"$rootfs" > "$DSEC_RUN/sandboxes/$id/state.json"
jq -c '{type:"sandbox",v:1,id:"dead",pid:999999,pid_start:1,rootfs:.}' <<<"$rootfs" \
    > "$DSEC_RUN/sandboxes/dead/state.json"
echo '{not json' > "$DSEC_RUN/sandboxes/garbage.json"
ls=$(dsec-mount ls)
[ "$(jq -r 'select(.name=="base") | .users' <<<"$ls")" = 1 ] || fail "base users: $ls"
[ "$(jq -r 'select(.name=="task") | .users' <<<"$ls")" = 1 ] || fail "task users: $ls"

# Releasing a used layer is refused with a clear error; unused ones still go.
set +e
err=$(dsec-mount release task 2>"$T/stderr"); rc=$?
set -e
[ "$rc" = 1 ] || fail "release of a used layer exited $rc"
[ "$(jq -r .code <<<"$err")" = busy ] || fail "not a busy error: $err"
grep -q "live sandbox" "$T/stderr" || fail "unclear message: $(cat "$T/stderr")"
grep -q " $DSEC_RUN/layers/${task#sha256:} " /proc/self/mountinfo || fail "used layer was unmounted"
[ -z "$(dsec-mount release)" ] || fail "release (all) released a used layer"
expect_exit 1 dsec-mount release no-such-layer

# The sandbox is gone: users drop to 0 (derived, not counted) and release works.
kill "$live"; wait "$live" 2>/dev/null || true
[ "$(dsec-mount ls | jq -r .users | sort -u)" = 0 ] || fail "users after the sandbox died"
out=$(dsec-mount release "${task:7:12}")
[ "$(jq -r .released <<<"$out")" = true ] || fail "release record: $out"
[ ! -e "$DSEC_RUN/layers/${task#sha256:}" ] || fail "mountpoint left behind"
dsec-mount release >/dev/null
[ -z "$(dsec-mount ls)" ] || fail "layers left after release"
grep -q " $DSEC_RUN/layers/[0-9a-f]" /proc/self/mountinfo && fail "mounts left"
# Mounting again after a release works.
dsec-mount base >/dev/null
[ "$(dsec-mount ls | jq -r .name)" = base ] || fail "remount"
echo ok
