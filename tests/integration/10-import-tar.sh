#!/bin/bash
# dsec-layer import: tar archives in every compression give the same reproducible layer,
# owners and modes come from the archive, stdin works, unnamed imports go with gc.
. "$(dirname "$0")/lib.sh"

src="$T/src"
make_busybox_tree "$src"
mkdir -p "$src/home/user" "$src/opt"
echo data > "$src/home/user/file"
chown -R 1234:5678 "$src/home/user"
chmod 0640 "$src/home/user/file"
ln "$src/etc/passwd" "$src/etc/passwd.hard"
ln -s /does/not/matter "$src/opt/dangling"
tar -C "$src" --numeric-owner -cf "$T/a.tar" .

d=$(dsec-layer import "$T/a.tar" --name base --label os=busybox | jq -r .digest)
[ -n "$d" ] && [ "$d" != null ] || fail "plain tar import"
rec=$(dsec-layer inspect base)
jq -e --arg s "tar:$T/a.tar" '.source == $s and .labels.os == "busybox" and .compression == "lz4" and .files > 20' \
    <<<"$rec" >/dev/null || fail "record: $rec"

# Every compression libarchive reads gives the same digest; so does stdin.
for z in gzip xz zstd bzip2; do
    $z -c "$T/a.tar" > "$T/a.tar.$z"
    got=$(dsec-layer import "$T/a.tar.$z" --name "base-$z" | jq -r .digest)
    [ "$got" = "$d" ] || fail "$z import gives $got, plain gives $d"
done
got=$(zstd -c "$T/a.tar" | dsec-layer import - --name from-stdin | jq -r '.digest + " " + .source')
[ "$got" = "$d tar:-" ] || fail "stdin import: $got"
# A tar made of the same tree by another tar (other order) too.
(cd "$src" && find . -print0 | sort -rz | tar --numeric-owner --no-recursion --null -T - -cf "$T/b.tar")
got=$(dsec-layer import "$T/b.tar" --name reordered | jq -r .digest)
[ "$got" = "$d" ] || fail "same tree, other archive order: $got vs $d"
# Files keep their mtimes (python's .pyc, make and rsync compare them): another mtime is
# another layer, and the image holds it.
touch -d 2001-01-01T00:00:00Z "$src/etc/group"
tar -C "$src" --numeric-owner -cf "$T/c.tar" .
m=$(dsec-layer import "$T/c.tar" --name retimed | jq -r .digest)
[ "$m" != "$d" ] || fail "an mtime changed and the digest did not"
mkdir "$T/m"
fsck.erofs --extract="$T/m" "$DSEC_ROOT/layers/${m#sha256:}.erofs" >/dev/null
[ "$(stat -c %Y "$T/m/etc/group")" = "$(date -d 2001-01-01T00:00:00Z +%s)" ] || fail "mtime lost: $(stat -c %y "$T/m/etc/group")"
[ "$(stat -c %Y "$T/m/home/user/file")" = "$(stat -c %Y "$src/home/user/file")" ] || fail "mtime lost: home/user/file"

# The image holds the archive's owners, modes, links.
mkdir "$T/x"
fsck.erofs --extract="$T/x" "$DSEC_ROOT/layers/${d#sha256:}.erofs" >/dev/null
[ "$(stat -c '%u:%g %a' "$T/x/home/user/file")" = "1234:5678 640" ] || fail "owner/mode lost: $(stat -c '%u:%g %a' "$T/x/home/user/file")"
[ "$(readlink "$T/x/opt/dangling")" = /does/not/matter ] || fail "symlink target changed"
nid() { dump.erofs --path="$1" "$DSEC_ROOT/layers/${d#sha256:}.erofs" | grep -o 'NID: [0-9]*'; }
[ "$(nid /etc/passwd)" = "$(nid /etc/passwd.hard)" ] || fail "hard link lost"
cmp -s "$T/x/bin/busybox" /bin/busybox || fail "file content differs"

# --compress is honoured; a bad one is a usage error.
dsec-layer import "$T/a.tar" --compress none | jq -e '.compression == "none"' >/dev/null || fail "--compress none"
expect_exit 2 dsec-layer import "$T/a.tar" --compress gzip >/dev/null 2>&1
expect_exit 1 dsec-layer import "$T/missing.tar" >/dev/null 2>&1

# Unnamed layers go with gc; named ones stay.
dsec-layer gc | jq -e 'select(.kind == "unnamed_layer")' >/dev/null || fail "gc kept the unnamed import"
dsec-layer verify base | jq -e .ok >/dev/null || fail "named layer damaged"
[ -z "$(ls "$DSEC_ROOT/layers/tmp")" ] || fail "staging left behind"
echo ok
