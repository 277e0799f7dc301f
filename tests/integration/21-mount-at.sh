#!/bin/bash
# dsec-mount --at DIR assembles a rootfs's overlay (safe options) and umount takes it down.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/base"
mkdir -p "$T/task/etc" "$T/task/work"
echo "task passwd" > "$T/task/etc/passwd"
echo hi > "$T/task/work/hi"
dsec-layer build "$T/base" --name base >/dev/null
dsec-layer build "$T/task" --name task >/dev/null

# From a rootfs record on stdin, with its upper: writes land in the upper.
dsec-mount --id look base task > "$T/rootfs.json"
out=$(dsec-mount --at "$T/look" < "$T/rootfs.json")
[ "$(jq -r .at <<<"$out")" = "$T/look" ] || fail "record lacks at"
[ "$(cat "$T/look/etc/passwd")" = "task passwd" ] || fail "top layer does not win"
[ -x "$T/look/bin/busybox" ] || fail "base layer missing"
echo new > "$T/look/work/new"
[ "$(cat "$DSEC_ROOT/sandboxes/look/upper/work/new")" = new ] || fail "write did not reach the upper"
rm "$T/look/work/hi"
[ -c "$DSEC_ROOT/sandboxes/look/upper/work/hi" ] || fail "no whiteout in the upper"
line=$(grep " $T/look " /proc/self/mountinfo)
[[ $line == *" - overlay "* ]] || fail "not an overlay: $line"
[[ $line == *redirect_dir=nofollow* ]] || fail "redirect_dir not nofollow: $line"
[[ $line == *metacopy=on* ]] && fail "metacopy on: $line"
[[ $line == *nodev* ]] || fail "overlay not nodev: $line"
[[ $line == *lowerdir+=* ]] || fail "not one lowerdir+ per layer: $line"
# No extra mount on the host for the overlay beyond the one at DIR.
expect_exit 1 dsec-mount umount "$T"            # not a mount point
expect_exit 1 dsec-mount umount "$DSEC_RUN"     # a mount, but not an overlay
expect_exit 1 dsec-mount umount "$(jq -r '.lowerdirs[0]' "$T/rootfs.json")"  # a layer: release's job
dsec-mount umount "$T/look"
grep -q " $T/look " /proc/self/mountinfo && fail "still mounted"
expect_exit 1 dsec-mount umount "$T/look"

# Read-only views: layers only, no sandbox directory made; one layer is a plain ro bind.
n=$(ls "$DSEC_ROOT/sandboxes" | wc -l)
dsec-mount --at "$T/ro" --read-only base task >/dev/null
[ "$(cat "$T/ro/work/hi")" = hi ] || fail "read-only view"
touch "$T/ro/x" 2>/dev/null && fail "read-only view is writable"
[ "$(ls "$DSEC_ROOT/sandboxes" | wc -l)" = "$n" ] || fail "read-only view made a sandbox dir"
dsec-mount umount "$T/ro"
dsec-mount --at "$T/one" --read-only base >/dev/null
[ -x "$T/one/bin/busybox" ] || fail "single-layer view"
touch "$T/one/x" 2>/dev/null && fail "single-layer view is writable"
dsec-mount umount "$T/one"

# Long paths: a run directory past fsconfig's 255-byte strings (lowerdir+ by fd).
long="$T/$(printf 'd%.0s' $(seq 1 120))/$(printf 'e%.0s' $(seq 1 120))"
mkdir -p "$long"
mount -t tmpfs long-run "$long"
out=$(DSEC_RUN=$long dsec-mount --at "$T/longlook" --read-only base task)
[ "$(cat "$T/longlook/work/hi")" = hi ] || fail "overlay with long lowerdir paths"
(( ${#long} > 255 )) || fail "path not long enough to test"
dsec-mount umount "$T/longlook"

# --at takes one rootfs.
cat "$T/rootfs.json" "$T/rootfs.json" > "$T/two.json"
expect_exit 2 dsec-mount --at "$T/x" < "$T/two.json"
expect_exit 2 dsec-mount --at "$T/x" --count 2 base
echo ok
