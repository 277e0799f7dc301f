#!/bin/bash
# A shared store changed behind dsec's back: metadata pointing at another layer's
# digest, a metadata file or an image replaced by a symlink, a name holding a path, an
# image truncated together with its metadata, and a byte flipped in an image this node
# verified before. Each is refused with a "corrupt" error record and one line on
# stderr before the kernel mounts anything; the good layers still mount.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/base"
mkdir -p "$T/task/work" && head -c 300000 /dev/urandom > "$T/task/work/blob"
base=$(dsec-layer build "$T/base" --name base | jq -r .digest)
task=$(dsec-layer build "$T/task" --name task --compress none | jq -r .digest)
S=$DSEC_ROOT/layers

# Runs the command, expects exit 1 and a corrupt error record mentioning $1.
expect_corrupt() {
    local words=$1; shift
    local out got=0
    out=$("$@" 2>"$T/stderr") || got=$?
    [ "$got" = 1 ] || fail "$*: exit $got, wanted 1: $out"
    [ "$(tail -1 <<<"$out" | jq -r .type)/$(tail -1 <<<"$out" | jq -r .code)" = error/corrupt ] ||
        fail "$*: wanted a corrupt error record, got: $out"
    [ "$(wc -l < "$T/stderr")" = 1 ] || fail "$*: wanted one line on stderr: $(cat "$T/stderr")"
    grep -q -- "$words" "$T/stderr" || fail "$*: stderr does not say \"$words\": $(cat "$T/stderr")"
}
nothing_mounted() {
    grep -q " $DSEC_RUN/layers/[0-9a-f]" /proc/self/mountinfo && fail "a layer is mounted: $*"
    true
}
# Keeps a copy of the store's files to put back after each break.
cp -a "$S" "$T/pristine"
restore() { rm -rf "$S" && cp -a "$T/pristine" "$S"; }

# Metadata pointing at another digest: task's metadata copied over base's.
cp "$S/${task#sha256:}.json" "$S/${base#sha256:}.json"
expect_corrupt "not the digest it is stored under" dsec-mount base
nothing_mounted "metadata of another digest"
restore

# The metadata file a symlink (to a copy elsewhere that says the right thing).
cp "$S/${base#sha256:}.json" "$T/meta.json"
ln -sf "$T/meta.json" "$S/${base#sha256:}.json"
expect_corrupt "metadata is a symlink" dsec-mount base
restore

# The image a symlink: even to a file with the right bytes, the kernel never follows it.
cp "$S/${base#sha256:}.erofs" "$T/image.erofs"
ln -sf "$T/image.erofs" "$S/${base#sha256:}.erofs"
expect_corrupt "image is a symlink" dsec-mount base
nothing_mounted "symlinked image"
restore

# A name holding a path instead of a digest is not followed.
echo "../../../tmp/x" > "$S/names/base"
expect_corrupt "not a layer digest" dsec-mount base
restore

# Truncated, with the metadata's size rewritten to match: the superblock tells.
img=$S/${task#sha256:}.erofs meta=$S/${task#sha256:}.json
chmod u+w "$img" "$meta"
truncate -s 8192 "$img"
jq -c '.size = 8192' "$meta" > "$T/m" && cat "$T/m" > "$meta"
expect_corrupt "truncated" dsec-mount task
nothing_mounted "truncated with its metadata"
restore

# Verified once per node: the first --verify records the file, a release and a second
# --verify use the record, and a byte flipped in place afterwards is found.
dsec-mount --verify task >/dev/null || fail "--verify of a good layer"
rec=$DSEC_RUN/verified/${task#sha256:}
[ -s "$rec" ] || fail "no verified record at $rec"
dsec-mount release >/dev/null || fail "release"
before=$(stat -c %Y.%y "$rec")
sleep 0.01
dsec-mount --verify task >/dev/null || fail "second --verify"
[ "$(stat -c %Y.%y "$rec")" = "$before" ] || fail "the verified record was rewritten: the image was hashed again"
dsec-mount release >/dev/null
img=$S/${task#sha256:}.erofs
chmod u+w "$img"
# A byte that differs from the one there (the image holds random data: writing a fixed
# byte would change nothing once in 256 runs).
off=$(( $(stat -c %s "$img") - 5000 ))
byte=$(dd if="$img" bs=1 skip="$off" count=1 status=none | od -An -tu1 | tr -d ' ')
printf "\\$(printf '%03o' $(( (byte + 1) % 256 )))" | dd of="$img" bs=1 seek="$off" conv=notrunc status=none
[ "$(dd if="$img" bs=1 skip="$off" count=1 status=none | od -An -tu1 | tr -d ' ')" != "$byte" ] ||
    fail "the byte at $off did not change"
expect_corrupt "digest mismatch" dsec-mount --verify task
nothing_mounted "flipped after a verify"
restore

# What was put back mounts, verified.
out=$(dsec-mount --verify base task) || fail "good layers after the breaks"
[ "$(jq -r .type <<<"$out")" = rootfs ] || fail "no rootfs record: $out"
dsec-mount release >/dev/null 2>&1 || true
echo ok
