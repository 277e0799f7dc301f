#!/bin/bash
# A reset after the sandbox's layer was unmounted (a lazy umount, a release by hand)
# mounts it again from the store, as create --layers does, instead of leaving the sandbox
# dead; a layer gone from the store is not_found and the sandbox keeps running.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/snap-lib.sh"

make_reset_base

for standby in "" --standby; do
    dsec-run create --layers base --id box $standby > /dev/null
    layer=$(dsec-run inspect box | jq -r '.rootfs.layers[0].path')
    dsec-run exec box -- sh -c 'echo changed > /work/file'
    umount -l "$layer"
    mountpoint -q "$layer" && fail "$standby: the layer is still mounted"
    dsec-run reset $standby box > "$T/rec" || fail "$standby: reset after the layer was unmounted: $(cat "$T/rec")"
    [ "$(dsec-run exec box -- cat /work/file)" = base ] || fail "$standby: not back to the layer after reset"
    dsec-run exec box -- ls /bin/busybox > /dev/null || fail "$standby: empty root after reset"
    mountpoint -q "$layer" || fail "$standby: the layer was not mounted again"
    dsec-run destroy box > /dev/null
done

# A layer that is gone from the store: the reset fails before it kills anything.
dsec-run create --layers base --id gone > /dev/null
layer=$(dsec-run inspect gone | jq -r '.rootfs.layers[0].path')
pid=$(dsec-run inspect gone | jq -r .pid)
umount -l "$layer"
store=${DSEC_STORE:-$DSEC_ROOT/layers}
mv "$store" "$T/store-away"
expect_exit 1 sh -c "dsec-run reset gone > '$T/out' 2> '$T/err'"
mv "$T/store-away" "$store"
jq -e '.type == "error" and .code == "not_found"' "$T/out" > /dev/null || fail "reset without the layer: $(cat "$T/out")"
[ "$(wc -l < "$T/err")" = 1 ] || fail "not one error line: $(cat "$T/err")"
kill -0 "$pid" || fail "a failed remount killed the sandbox's init"
echo ok
