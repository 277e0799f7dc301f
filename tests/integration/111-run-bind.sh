#!/bin/bash
# create --bind SRC:DST[:ro|rw]: a host path inside the sandbox, read-only by default and
# locked so: even root of the sandbox with CAP_SYS_ADMIN and no seccomp cannot remount it
# read-write, in its namespace or a new one, and unmounting it there shows nothing of the
# host. A read-write bind
# writes only as the sandbox's id mapping allows. Refused: protected destinations, a
# device, symlink or store/run/root source, --userns=host, and a hostile image whose path
# to DST has a symlink. Recorded in the state; kept across reset; not packed by snapshot;
# nothing reaches the host's mount table.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
for app in mount umount unshare grep; do ln -sf busybox "$T/tree/bin/$app"; done
mkdir -p "$T/tree/etc/deep"
dsec-layer build "$T/tree" --name base > /dev/null
# A hostile image: its /evil is a symlink to the root, its /etc/deep/up one to "..".
cp -a "$T/tree" "$T/hostile"
ln -s / "$T/hostile/evil"
ln -s .. "$T/hostile/etc/deep/up"
dsec-layer build "$T/hostile" --name hostile > /dev/null

mkdir -p "$T/data" "$T/rw"
echo "host secret" > "$T/data/secret"
echo "one file" > "$T/onefile"

# Root of the sandbox with CAP_SYS_ADMIN and no seccomp: only the kernel's lock is left.
dsec-run create --layers base --id bd --cap-add SYS_ADMIN --seccomp unconfined \
    --bind "$T/data:/data" --bind "$T/rw:/mnt/new/rw:rw" --bind "$T/onefile:/etc/onefile:ro" > "$T/rec" ||
    fail "create with binds: $(cat "$T/rec")"
on_exit "dsec-run destroy --force bd > /dev/null"
jq -e --arg d "$T/data" --arg r "$T/rw" --arg f "$T/onefile" '.binds == [{"src":$d,"dst":"/data","mode":"ro"},
    {"src":$r,"dst":"/mnt/new/rw","mode":"rw"},{"src":$f,"dst":"/etc/onefile","mode":"ro"}]' "$T/rec" > /dev/null ||
    fail "create record: $(jq -c .binds "$T/rec")"
dsec-run inspect bd | jq -e '.binds | length == 3' > /dev/null || fail "inspect: no binds"

in_box() { dsec-run exec bd -- sh -c "$1" 2>&1 || true; }
[ "$(in_box 'cat /data/secret /etc/onefile')" = "$(printf 'host secret\none file')" ] || fail "bind contents: $(in_box 'cat /data/secret /etc/onefile')"
in_box 'grep -c " /data " /proc/self/mounts' | grep -qx 1 || fail "no /data mount inside"
# Read-only, and locked so.
r=$(in_box 'echo x > /data/new')
echo "$r" | grep -qi "read-only" || fail "write to a ro bind: $r"
# The control: root of this sandbox can mount (a tmpfs), so what stops the remounts below
# is the lock, not a missing capability or seccomp.
in_box 'mkdir -p /x && mount -t tmpfs t /x && echo CAN_MOUNT' | grep -qx CAN_MOUNT || fail "no mount power inside: the test proves nothing"
for cmd in 'mount -o remount,rw /data' 'mount -o remount,bind,rw /data' 'mount -o remount,rw /etc/onefile' \
           'unshare -m sh -c "mount -o remount,bind,rw /data && echo x > /data/new"'; do
    r=$(in_box "$cmd && echo WORKED")
    ! echo "$r" | grep -q WORKED && echo "$r" | grep -qi "permission denied" || fail "inside: \"$cmd\": $r"
done
[ "$(in_box 'cat /data/secret; ls /data')" = "$(printf 'host secret\nsecret')" ] || fail "the ro bind changed: $(in_box 'ls /data')"
[ ! -e "$T/data/new" ] && [ "$(ls "$T/data")" = secret ] || fail "the host directory changed: $(ls "$T/data")"

# Read-write: as the mapping allows. Root of the sandbox is an unprivileged host id: not
# the host directory's owner, so not writable until the host opens it up.
r=$(in_box 'echo x > /mnt/new/rw/f')
echo "$r" | grep -qi "permission denied" || fail "rw bind of a root-owned 0755 directory was writable: $r"
chmod 1777 "$T/rw"
in_box 'echo written > /mnt/new/rw/f' > /dev/null
[ "$(cat "$T/rw/f" 2>/dev/null)" = written ] || fail "rw bind: nothing written"
[ "$(stat -c %u "$T/rw/f")" != 0 ] || fail "a file written through the bind is host root's"

# Snapshot packs the upper, not what is bound: nor the ro bind's files, nor the rw one's.
in_box 'echo upper > /root/mine' > /dev/null
dsec-run snapshot bd --name snap > /dev/null || fail "snapshot with binds"
dsec-layer export snap -o "$T/snap.tar.zst" > /dev/null
mkdir "$T/snap"
zstd -dc "$T/snap.tar.zst" | tar -x -C "$T/snap"
[ "$(cat "$T/snap/root/mine")" = upper ] || fail "snapshot lost the upper: $(find "$T/snap")"
# Only the mountpoints made for the binds, empty.
[ -z "$(find "$T/snap/data" "$T/snap/mnt/new/rw" -mindepth 1)" ] && [ ! -s "$T/snap/etc/onefile" ] ||
    fail "snapshot packed bind contents: $(find "$T/snap/data" "$T/snap/mnt" "$T/snap/etc/onefile")"

# Reset starts the init again: the binds come back with it.
dsec-run reset bd > /dev/null || fail "reset"
[ "$(in_box 'cat /data/secret')" = "host secret" ] || fail "after reset: $(in_box 'cat /data/secret')"
r=$(in_box 'mount -o remount,bind,rw /data && echo WORKED')
! echo "$r" | grep -q WORKED || fail "after reset the bind is not locked: $r"

# Unmounting it (after the snapshot: what it writes lands in the upper) in a namespace of its own shows only the image's empty directory under
# it, never the host's files writable.
in_box 'unshare -m sh -c "umount /data; umount -l /data; echo x > /data/secret; echo x > /data/new"' > /dev/null
[ "$(ls "$T/data")" = secret ] && [ "$(cat "$T/data/secret")" = "host secret" ] || fail "the host directory changed: $(ls "$T/data")"

# A fork gets the same binds, locked the same way.
fork=$(dsec-run fork bd | jq -r .id)
on_exit "dsec-run destroy --force $fork > /dev/null"
[ "$(dsec-run exec "$fork" -- cat /data/secret)" = "host secret" ] || fail "the fork has no /data"
r=$(dsec-run exec "$fork" -- sh -c 'mount -o remount,bind,rw /data && echo WORKED' 2>&1 || true)
! echo "$r" | grep -q WORKED || fail "the fork's bind is not locked: $r"
dsec-run destroy "$fork" > /dev/null

# Refused, one line on stderr and an error record, nothing left behind.
refuse() {  # CODE EXIT BIND [CREATE OPTION...]
    local code=$1 want=$2 bind=$3 got=0
    shift 3
    dsec-run create --layers base --id refused --bind "$bind" "$@" > "$T/rec" 2> "$T/err" || got=$?
    [ "$got" = "$want" ] || fail "--bind $bind $*: exit $got: $(cat "$T/err")"
    [ "$(wc -l < "$T/err")" = 1 ] || fail "--bind $bind: stderr: $(cat "$T/err")"
    [ "$want" = 2 ] || jq -e --arg c "$code" '.type == "error" and .code == $c' "$T/rec" > /dev/null ||
        fail "--bind $bind: record $(cat "$T/rec")"
    [ ! -e "$DSEC_RUN/sandboxes/refused" ] || fail "--bind $bind left state behind"
}
for dst in /proc/x /dev/shm /sys /tmp/x /dsec-init / relative /a/../b /a/./b; do refuse usage 2 "$T/data:$dst"; done
refuse usage 2 "$T/data"
refuse usage 2 "$T/data:/x:rx"
refuse bad_input 1 "/dev/null:/null"
refuse bad_input 1 "$DSEC_ROOT:/store"
refuse bad_input 1 "$DSEC_RUN/sandboxes:/others"
refuse bad_input 1 "/:/host"
ln -s "$T/data" "$T/link"
refuse bad_input 1 "$T/link:/data"
refuse usage 2 "$T/data:/data" --userns host
# The hostile image: a symlink on the way to DST is never followed, into the root or out.
for dst in /evil/x /etc/deep/up/x; do
    got=0
    dsec-run create --layers hostile --id refused --bind "$T/data:$dst" > "$T/rec" 2> "$T/err" || got=$?
    [ "$got" = 1 ] && jq -e '.errno_name == "ELOOP"' "$T/rec" > /dev/null || fail "hostile $dst: exit $got: $(cat "$T/err")"
    [ ! -e "$DSEC_RUN/sandboxes/refused" ] || fail "hostile $dst left state behind"
done
[ ! -e /x ] || fail "something was made at the host's /x"

dsec-run destroy bd > /dev/null
# Neither a bind nor the tmpfs they wait in before the clone reached the host's table.
! grep -qE "$T/(data|rw|onefile)|^dsec-binds |/sandboxes/" /proc/self/mounts ||
    fail "a bind reached the host's mount table: $(grep -E "$T/(data|rw|onefile)|^dsec-binds |/sandboxes/" /proc/self/mounts)"
echo ok
