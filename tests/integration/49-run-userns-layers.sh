#!/bin/bash
# Layers inside an unprivileged sandbox: the overlay is mounted by root of the sandbox's
# own user namespace (userxattr), over idmapped clones of the layer mounts and of the
# upper. A whiteout and an opaque directory of an OCI layer still hide what lies below,
# layer files are owned by root inside, and what the sandbox writes lands on disk with
# its in-sandbox owners (0 stays 0), so a snapshot could pack it as it is.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/base"
mkdir -p "$T/base/opaque/old" "$T/base/keep"
echo secret > "$T/base/etc/gone"
echo old > "$T/base/opaque/old/file"
echo old > "$T/base/opaque/sibling"
echo kept > "$T/base/keep/file"
chown 1000:1000 "$T/base/keep/file"
dsec-layer build "$T/base" --name base > /dev/null

mkdir -p "$T/top/etc" "$T/top/opaque" "$T/top/keep"
touch "$T/top/etc/.wh.gone" "$T/top/opaque/.wh..wh..opq"
echo new > "$T/top/opaque/new"
# An archive may not bring overlay attributes of its own: dropped at import.
setfattr -n user.overlay.redirect -v /etc "$T/top/keep" 2>/dev/null || true
tar --xattrs --xattrs-include='*' -C "$T/top" -cf "$T/top.tar" .
dsec-layer import "$T/top.tar" --oci-layer --name top > /dev/null

dsec-run create --layers base,top --id uns > /dev/null
on_exit "dsec-run destroy --force uns > /dev/null"
dsec-run exec uns -- test ! -e /etc/gone || fail "whiteout did not hide /etc/gone inside the sandbox"
[ "$(dsec-run exec uns -- ls /opaque)" = new ] || fail "opaque directory shows lower entries: $(dsec-run exec uns -- ls /opaque)"
[ "$(dsec-run exec uns -- cat /keep/file)" = kept ] || fail "lower file under a plain directory hidden"
[ "$(dsec-run exec uns -- stat -c %u:%g /bin/busybox)" = 0:0 ] || fail "layer files not owned by root inside"
[ "$(dsec-run exec uns -- stat -c %u:%g /keep/file)" = 1000:1000 ] || fail "layer owners not kept inside"

# Inside, root; outside, an unprivileged id of the sandbox's own range.
map=$(dsec-run exec uns -- cat /proc/self/uid_map)
read -r host first < <(id_map "$map")
[ "$first" -ge 1073741824 ] || fail "uid_map: $map"
init=$(dsec-run inspect uns | jq -r .pid)
[ "$(stat -c %u "/proc/$init")" = "$host" ] || fail "the init runs as host uid $(stat -c %u "/proc/$init"), not $host"

# Writes: on disk with the owners seen inside; copy-up of a lower file too.
dsec-run exec uns -- sh -c 'echo hi > /root/new; chown 1000:1000 /root/new; echo more >> /keep/file; rm /opaque/new; mkdir /opaque/d'
upper="$DSEC_ROOT/sandboxes/uns/upper"
[ "$(stat -c %u:%g "$upper/root/new")" = 1000:1000 ] || fail "new file on disk: $(stat -c %u:%g "$upper/root/new")"
[ "$(stat -c %u:%g "$upper/root")" = 0:0 ] || fail "copied-up directory on disk: $(stat -c %u:%g "$upper/root")"
[ "$(stat -c %u:%g "$upper/keep/file")" = 1000:1000 ] || fail "copied-up file on disk: $(stat -c %u:%g "$upper/keep/file")"
# The overlay keeps its own marks in user.overlay.* (userxattr): the deleted lower file
# is a whiteout in the upper.
[ "$(stat -c '%t:%T %F' "$upper/opaque/new" 2>/dev/null)" = "0:0 character special file" ] ||
    getfattr -d -m 'user.overlay' "$upper/opaque" 2>/dev/null | grep -q overlay ||
    fail "no whiteout for a deleted lower file in the upper"

# Two sandboxes get two disjoint host ranges.
dsec-run create --layers base --id uns2 > /dev/null
on_exit "dsec-run destroy --force uns2 > /dev/null"
read -r host2 first2 < <(id_map "$(dsec-run exec uns2 -- cat /proc/self/uid_map)")
[ "$host2" != "$host" ] && { [ $((first2 - first)) -ge 65536 ] || [ $((first - first2)) -ge 65536 ]; } ||
    fail "ranges overlap: from $first and from $first2"
# Root is 1 + (the range's number mod 127) into its range, so that roots spread over
# the kernel's uid hash (by the low bits).
for pair in "$host $first" "$host2 $first2"; do
    read -r h f <<< "$pair"
    [ $((h - f)) = $((1 + f / 65536 % 127)) ] || fail "root at $h in the range from $f"
done
# Destroy gives the range back.
dsec-run destroy uns2 > /dev/null

[ "$(find "$DSEC_RUN/userns" -type f ! -name .lock | wc -l)" = 1 ] || fail "id range slots: $(ls -A "$DSEC_RUN/userns")"
echo ok
