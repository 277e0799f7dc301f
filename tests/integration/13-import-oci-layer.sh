#!/bin/bash
# import --oci-layer: .wh.NAME files become overlayfs whiteouts (0/0 character devices),
# .wh..wh..opq makes its directory opaque (trusted.overlay.opaque=y); mkfs.erofs carries
# both into the image, and an overlay with the layer above another hides those paths.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/base/etc" "$T/base/opaque/old" "$T/base/keep"
echo secret > "$T/base/etc/gone"
echo old > "$T/base/opaque/old/file"
echo old > "$T/base/opaque/sibling"
echo kept > "$T/base/keep/file"
tar -C "$T/base" -cf "$T/base.tar" .
dsec-layer import "$T/base.tar" --name base >/dev/null

mkdir -p "$T/top/etc" "$T/top/opaque" "$T/top/keep"
touch "$T/top/etc/.wh.gone" "$T/top/opaque/.wh..wh..opq" "$T/top/keep/.wh..wh..plnk"
echo new > "$T/top/opaque/new"
tar -C "$T/top" -czf "$T/top.tar.gz" .
rec=$(dsec-layer import "$T/top.tar.gz" --oci-layer --name top)
img=$(jq -r .image <<<"$rec")

# In the image: a 0/0 character device and an opaque directory; no .wh. names.
dump.erofs --path=/etc/gone "$img" | grep -q 'char dev' || fail "no whiteout device in the image"
mkdir "$T/m" "$T/b" "$T/ov"
mount -t erofs -o ro,loop "$img" "$T/m"
on_exit umount "$T/m"
[ "$(stat -c '%t:%T %F' "$T/m/etc/gone")" = "0:0 character special file" ] || fail "whiteout: $(stat -c '%t:%T %F' "$T/m/etc/gone")"
[ "$(getfattr --only-values -n trusted.overlay.opaque "$T/m/opaque")" = y ] ||
    fail "opaque xattr missing"
[ -z "$(find "$T/m" -name '.wh.*')" ] || fail "whiteout files left in the image"

# Stacked on the base, the overlay hides what the layer deletes.
mount -t erofs -o ro,loop "$DSEC_ROOT/layers/$(dsec-layer ls base | jq -r '.digest | ltrimstr("sha256:")').erofs" "$T/b"
on_exit umount "$T/b"
mount -t overlay dsec-test-ov -o "lowerdir=$T/m:$T/b" "$T/ov"
on_exit umount "$T/ov"
[ ! -e "$T/ov/etc/gone" ] || fail "whiteout did not hide etc/gone"
[ "$(ls "$T/ov/opaque")" = new ] || fail "opaque dir shows lower entries: $(ls "$T/ov/opaque")"
[ "$(cat "$T/ov/keep/file")" = kept ] || fail "lower file under a plain dir hidden"

# Without --oci-layer, .wh. files are ordinary files.
plain=$(dsec-layer import "$T/top.tar.gz" | jq -r .image)
dump.erofs --path=/etc/.wh.gone "$plain" | grep -q 'regular file' || fail ".wh. file not kept as a file"

# An OCI layer is reproducible too.
again=$(dsec-layer import "$T/top.tar.gz" --oci-layer | jq -r .digest)
[ "$again" = "$(jq -r .digest <<<"$rec")" ] || fail "OCI layer digest not reproducible"
echo ok
