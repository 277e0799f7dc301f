#!/bin/bash
# A layer store on tmpfs, where erofs cannot mount an image file itself ("Block device
# required"): layers are mounted through read-only loop devices that go with their
# mounts, and everything works as on disk; nothing stays attached afterwards.
. "$(dirname "$0")/lib.sh"

[ -e /dev/loop-control ] || skip "no loop device support"
make_busybox_tree "$T/tree"
mkdir "$T/store"
mount -t tmpfs -o size=256m dsec-test-store "$T/store"
export DSEC_ROOT="$T/store"
loops() { losetup -a | grep -c "${d#sha256:}" || true; }

d=$(dsec-layer build "$T/tree" --name base | jq -r .digest)
dsec-run create --layers base --id t > /dev/null || fail "create from a store on tmpfs"
on_exit "dsec-run destroy --force t > /dev/null"
[ "$(dsec-run exec t -- head -n 1 /etc/passwd)" = "$(head -n 1 "$T/tree/etc/passwd")" ] || fail "reading the layer"
dsec-run exec t -- sh -c 'echo hi > /tmp/x && cat /tmp/x' | grep -qx hi || fail "writing in the sandbox"
dsec-run destroy t > /dev/null
# export mounts the image too (detached): the round trip keeps the digest.
dsec-layer export base > "$T/base.tar.zst" || fail "export from a store on tmpfs"
got=$(DSEC_ROOT="$T/other" dsec-layer import "$T/base.tar.zst" | jq -r .digest)
[ "$got" = "$d" ] || fail "export round trip: $got, want $d"
dsec-mount release > /dev/null
[ "$(dsec-mount ls | wc -l)" = 0 ] || fail "layers still mounted: $(dsec-mount ls)"
[ "$(loops)" = 0 ] || fail "a loop device is still attached to the image: $(losetup -a)"
echo ok
