#!/bin/bash
# Bad input to dsec-mount: broken images, wrong digests, unknown layers, too many layers,
# malformed records. Each gives a clear error record and leaves nothing half-mounted.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/base"
mkdir -p "$T/task/work" && head -c 300000 /dev/urandom > "$T/task/work/blob"
dsec-layer build "$T/base" --name base >/dev/null
dsec-layer build "$T/task" --name task --compress none >/dev/null

# Runs dsec-mount with the remaining args, expects exit $1 and error code $2 in the
# last record on stdout.
expect_error() {
    local rc=$1 code=$2; shift 2
    local out got=0
    out=$("$@" 2>"$T/stderr") || got=$?
    [ "$got" = "$rc" ] || fail "$*: exit $got, wanted $rc: $out"
    [ "$(tail -1 <<<"$out" | jq -r .type)" = error ] || fail "$*: no error record: $out"
    [ "$(tail -1 <<<"$out" | jq -r .code)" = "$code" ] || fail "$*: code $(tail -1 <<<"$out" | jq -r .code), wanted $code"
    [ -s "$T/stderr" ] || fail "$*: nothing said on stderr"
}
# Nothing is mounted below $DSEC_RUN/layers and no mountpoint is left empty.
nothing_mounted() {
    grep -q " $DSEC_RUN/layers/[0-9a-f]" /proc/self/mountinfo && fail "a layer is mounted: $*"
    for d in "$DSEC_RUN"/layers/*; do [ -e "$d" ] || continue; fail "mountpoint left: $d ($*)"; done
    true
}
# A private copy of layer $1 to break: a new store holding only that layer.
copy_store() {
    rm -rf "$T/s" && mkdir -p "$T/s/names"
    local hex=${1#sha256:}
    cp "$DSEC_ROOT/layers/$hex.json" "$DSEC_ROOT/layers/$hex.erofs" "$T/s/"
    chmod u+w "$T/s/$hex.erofs"
    echo "$T/s/$hex.erofs"
}

expect_error 1 not_found dsec-mount no-such-layer
expect_error 1 not_found dsec-mount < "$DATA/mount/unknown-digest.jsonl"
expect_error 1 bad_input dsec-mount < "$DATA/mount/layer-no-digest.jsonl"
expect_error 1 bad_input dsec-mount < "$DATA/mount/layer-digest-number.jsonl"
expect_error 1 bad_input dsec-mount < "$DATA/mount/truncated-record.jsonl"
expect_error 1 bad_input dsec-mount --at "$T/x" < "$DATA/mount/rootfs-no-lowers.jsonl"
# An upstream error passes through unchanged and fails the run.
out=$(dsec-mount < "$DATA/mount/upstream-error.jsonl") && fail "upstream error did not fail the run"
[ "$(jq -r .message <<<"$out")" = 'no layer named "python"' ] || fail "upstream error not passed through: $out"
nothing_mounted "after bad records"

# More than 500 layers: too_many_layers, suggesting a squash, before anything is mounted.
rec=$(dsec-layer ls task)
for i in $(seq 1 501); do echo "$rec"; done > "$T/501.jsonl"
expect_error 1 too_many_layers dsec-mount < "$T/501.jsonl"
grep -q -- "--squash" "$T/stderr" || fail "no squash hint: $(cat "$T/stderr")"
nothing_mounted "after 501 layers"

digest=$(jq -r .digest <<<"$rec")
# A missing image.
img=$(copy_store "$digest"); rm "$img"
expect_error 1 not_found dsec-mount --store "$T/s" "$digest"
nothing_mounted "missing image"
# A truncated image: caught by its size before the kernel sees it.
img=$(copy_store "$digest"); truncate -s 100000 "$img"
expect_error 1 corrupt dsec-mount --store "$T/s" "$digest"
grep -q truncated "$T/stderr" || fail "unclear truncation message: $(cat "$T/stderr")"
nothing_mounted "truncated image"
# A broken superblock: refused by its header check before the kernel sees it.
img=$(copy_store "$digest"); printf 'garbage!garbage!' | dd of="$img" bs=1 seek=1024 conv=notrunc status=none
expect_error 1 corrupt dsec-mount --store "$T/s" "$digest"
grep -q "EROFS superblock" "$T/stderr" || fail "unclear superblock message: $(cat "$T/stderr")"
nothing_mounted "broken superblock"
# --verify catches the same break by its digest, before any mount.
expect_error 1 corrupt dsec-mount --store "$T/s" --verify "$digest"
nothing_mounted "verify"
# Flipped file data: mounts without --verify (only the digest can tell); --verify refuses.
img=$(copy_store "$digest")
printf 'XXXXXXXX' | dd of="$img" bs=1 seek=$(( $(stat -c %s "$img") - 4096 )) conv=notrunc status=none
expect_error 1 corrupt dsec-mount --store "$T/s" --verify "$digest"
nothing_mounted "verify of flipped data"
dsec-mount --store "$T/s" "$digest" >/dev/null || fail "mount without --verify"
dsec-mount release >/dev/null
# A good layer verifies and mounts.
dsec-mount --verify base task >/dev/null || fail "--verify of good layers"
echo ok
