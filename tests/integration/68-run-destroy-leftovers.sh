#!/bin/bash
# dsec-run destroy leaves nothing of what a sandbox (or a host tool) can leave in its
# upper directory: a directory chain ~40,000 levels deep, and immutable and append-only
# files and directories; nor does its teardown child, which removes them.
. "$(dirname "$0")/lib.sh"

command -v chattr > /dev/null || skip "no chattr (e2fsprogs) on the host"
make_busybox_tree "$T/tree"
# busybox has no chattr: the host's, with its libraries.
for f in "$(command -v chattr)" $(ldd "$(command -v chattr)" | grep -o '/[^ ]*'); do
    mkdir -p "$T/tree$(dirname "$f")" && cp -L "$f" "$T/tree$f"
done
dsec-layer build "$T/tree" --name base > /dev/null

# A chain of 200 x 201 levels. Not one `mkdir d && cd d` per level: ash's cd chdirs to
# the whole logical path (ENAMETOOLONG past ~2000 levels) and `cd -P` calls getcwd, which
# walks up ".." past PATH_MAX (quadratic). Instead the chain grows at its top: a fresh
# 201-level chain, the old one moved to its bottom, the whole renamed back.
dsec-run create --layers base --id deep > /dev/null
start=$(date +%s%N)
dsec-run exec deep -- sh -c '
    mkdir /deep && cd /deep || exit 1
    p=d; i=1; while [ $i -lt 200 ]; do p=$p/d; i=$((i+1)); done
    mkdir -p c/$p || exit 1
    j=1; while [ $j -lt 200 ]; do
        mkdir -p n/$p && busybox mv c n/$p/c && busybox mv n c || exit 1
        j=$((j+1))
    done' || fail "could not make the deep chain"
made=$(( ($(date +%s%N) - start) / 1000000 ))
upper=$(dsec-run inspect deep | jq -r .rootfs.upper)
[ -d "$upper/deep/c" ] || fail "no chain in the upper directory $upper"
levels=$(find "$upper/deep" -type d | wc -l)
[ "$levels" -gt 40000 ] || fail "the chain is only $levels levels deep"

# Flags. Set inside (with --userns=host --cap-add LINUX_IMMUTABLE; a private user
# namespace cannot), overlayfs keeps them in its trusted.overlay.protattr xattr rather than
# on the upper inode; a host tool sets them on the upper directory itself.
dsec-run create --layers base --id flags --userns=host --cap-add LINUX_IMMUTABLE > /dev/null
dsec-run exec flags -- sh -c 'mkdir -p /keep/idir/sub /keep/adir /inside && echo i > /keep/immutable &&
    echo a > /keep/append && echo f > /keep/idir/f && echo g > /keep/idir/sub/g && echo h > /keep/adir/h &&
    echo x > /inside/i && echo y > /inside/a && chattr +i /inside/i && chattr +a /inside/a &&
    ! rm -f /inside/i 2> /dev/null' || fail "could not write files and set flags inside"
fupper=$(dsec-run inspect flags | jq -r .rootfs.upper)
k=$fupper/keep
chattr +i "$k/immutable" 2> /dev/null || skip "the filesystem of $DSEC_ROOT takes no immutable flag"
# If destroy fails, the test's own cleanup must still be able to remove them.
on_exit "chattr -i -a '$k/immutable' '$k/append' '$k/idir/f' '$k/idir/sub' '$k/idir' '$k/adir/h' '$k/adir' '$k' '$fupper' 2> /dev/null"
chattr +a "$k/append" "$k/adir"
chattr +i "$k/idir/f" "$k/idir/sub" "$k/idir"
chattr +ia "$k/adir/h"
chattr +a "$k" "$fupper"
! rm -f "$k/immutable" 2> /dev/null || fail "chattr +i had no effect"

# Each upper is removed by its destroy's teardown child (dsec-run(1), destroy), after the
# destroy has returned.
start=$(date +%s%N)
dsec-run destroy deep | jq -e '.state == "destroyed"' > /dev/null || fail "destroy of the deep chain"
dsec-run destroy flags | jq -e '.state == "destroyed"' > /dev/null || fail "destroy with immutable files"
settle_teardowns || fail "the teardowns did not end"
removed=$(( ($(date +%s%N) - start) / 1000000 ))
[ -z "$(ls -A "$DSEC_ROOT/sandboxes" 2> /dev/null)" ] || fail "left under \$DSEC_ROOT/sandboxes: $(ls -A "$DSEC_ROOT/sandboxes")"
[ -z "$(ls -A "$DSEC_RUN/sandboxes" 2> /dev/null)" ] || fail "left under \$DSEC_RUN/sandboxes: $(ls -A "$DSEC_RUN/sandboxes")"
echo "ok: $levels levels made in ${made} ms, destroyed in ${removed} ms"
