#!/bin/bash
# On demand, shown: with a 200 MB layer in a store that counts the bytes read from it
# (a FUSE view, as a network filesystem would be), mounting the layer and reading one
# small file fetches a small fraction of the image.
. "$(dirname "$0")/lib.sh"

[ -e /dev/fuse ] || skip "no /dev/fuse"
command -v pkg-config >/dev/null && pkg-config --exists fuse3 || skip "libfuse3 development files missing"
cc -O2 -o "$T/countfs" "$DATA/mount/countfs.c" $(pkg-config --cflags --libs fuse3) || fail "countfs does not build"

# 200 MB of incompressible data plus many small files, stored uncompressed.
mkdir -p "$T/big/data" "$T/big/small"
for i in 1 2 3 4; do head -c 50M /dev/urandom > "$T/big/data/blob$i"; done
for i in $(seq 1 2000); do echo "small file $i" > "$T/big/small/f$i"; done
rec=$(dsec-layer build "$T/big" --name big --compress none)
rm -rf "$T/big"
size=$(jq -r .size <<<"$rec")
[ "$size" -ge $((200 * 1024 * 1024)) ] || fail "image is only $size bytes"

# The store seen through the counting view.
mkdir -p "$T/store"
"$T/countfs" "$DSEC_ROOT/layers" "$T/store" "$T/count" 2>"$T/countfs.log" & server=$!
on_exit "kill $server 2>/dev/null; wait $server 2>/dev/null"
on_exit "umount -l '$T/store' 2>/dev/null"
for _ in $(seq 1 100); do grep -q " $T/store " /proc/self/mountinfo && break; sleep 0.05; done
grep -q " $T/store " /proc/self/mountinfo || fail "countfs did not mount: $(cat "$T/countfs.log")"
on_exit "dsec-mount release >/dev/null 2>&1"
bytes() { cut -d' ' -f1 "$T/count"; }

export DSEC_STORE=$T/store
out=$(dsec-mount big)
after_mount=$(bytes)
layer=$(jq -r '.lowerdirs[0]' <<<"$out")
[ "$(cat "$layer/small/f1234")" = "small file 1234" ] || fail "wrong content"
after_read=$(bytes)
awk -v b="$after_read" -v s="$size" 'BEGIN { printf "on demand: mount read %d bytes; mount + one small file read %d of %d bytes (%.4f%%)\n", '"$after_mount"', b, s, 100 * b / s }'
[ "$after_read" -gt 0 ] || fail "the counter saw no reads: the measurement is broken"
[ $((after_read * 20)) -lt "$size" ] || fail "read $after_read of $size bytes: not under 5%"

# The counter is honest: reading one 50 MB file whole fetches at least 50 MB.
cat "$layer/data/blob3" > /dev/null
whole=$(bytes)
[ $((whole - after_read)) -ge $((50 * 1024 * 1024)) ] || fail "a 50 MB read counted only $((whole - after_read)) bytes"
echo ok
