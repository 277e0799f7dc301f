# shellcheck shell=bash
# Shared by the snapshot tests (9N-snap-*.sh), sourced after lib.sh.

# make_snap_base: the layer "base": busybox, setfattr/getfattr (with the libc they need)
# and a /work holding what the tests change: files to keep, modify and delete, a directory
# to delete, one to replace by a file, a file to replace by a directory, and a directory
# whose contents are replaced (opaque).
make_snap_base() {
    make_busybox_tree "$T/base"
    for tool in setfattr getfattr; do cp "$(command -v $tool)" "$T/base/bin/"; done
    mkdir -p "$T/base/lib/x86_64-linux-gnu" "$T/base/lib64"
    cp /lib/x86_64-linux-gnu/libc.so.6 "$T/base/lib/x86_64-linux-gnu/"
    cp /lib64/ld-linux-x86-64.so.2 "$T/base/lib64/"
    for app in truncate ln md5sum find sort sed chmod dd du grep mkfifo readlink; do ln -sf busybox "$T/base/bin/$app"; done
    mkdir -p "$T/base/work/deldir/sub" "$T/base/work/dir2file" "$T/base/work/opaque/old"
    echo keep > "$T/base/work/keep"
    echo modify > "$T/base/work/modify"
    echo delete > "$T/base/work/delete"
    echo a > "$T/base/work/deldir/sub/a"
    echo x > "$T/base/work/dir2file/x"
    echo file > "$T/base/work/file2dir"
    echo old > "$T/base/work/opaque/old/f"
    echo old > "$T/base/work/opaque/sibling"
    dsec-layer build "$T/base" --name base > /dev/null
}

# The changes a sandbox makes to /work (run inside it).
SNAP_CHANGES='set -e
echo new > /work/created
echo more >> /work/modify
rm /work/delete
rm -rf /work/deldir
rm -rf /work/dir2file && echo now-a-file > /work/dir2file
rm /work/file2dir && mkdir /work/file2dir && echo inside > /work/file2dir/in
rm -rf /work/opaque && mkdir /work/opaque && echo new > /work/opaque/new
echo linked > /work/h1 && ln /work/h1 /work/h2
setfattr -n user.colour -v blue /work/created
mkdir /work/xdir && setfattr -n user.tag -v dir /work/xdir
truncate -s 20M /work/sparse && echo tail >> /work/sparse
dd if=/dev/zero of=/work/sparse bs=4096 seek=100 count=1 conv=notrunc 2>/dev/null
chown 1000:1001 /work/created
ln -s ../created /work/xdir/link
mkdir -p /work/deep/a/b && echo deep > /work/deep/a/b/c
mkfifo /work/fifo
mkdir -m 0700 /work/private && echo p > /work/private/f && chmod 0600 /work/private/f && chown -R 1000:1000 /work/private
ln /work/deep/a/b/c /work/private/c-link'

# manifest ID: everything under /work as the sandbox sees it (type, mode, owner, size,
# links, content digest, user.* attributes, symlink target) and which paths share an inode.
manifest() {
    dsec-run exec "$1" -- sh -c 'cd /work && find . | sort | while read -r f; do
        # (a directory'"'"'s size depends on the filesystem that holds it)
        if [ -d "$f" ]; then stat -c "%n %F %a %u:%g %h" "$f"; else stat -c "%n %F %a %u:%g %s %h" "$f"; fi
        if [ -L "$f" ]; then readlink "$f"; elif [ -f "$f" ]; then md5sum < "$f"; fi
        getfattr -d -m "^user\." --absolute-names "$f" 2>/dev/null | grep -v "^#" || true
    done
    echo "h1/h2 same inode: $([ "$(stat -c %i h1)" = "$(stat -c %i h2)" ] && echo yes || echo no)"'
}

# start_from RECORD ID [create options]: a sandbox from a snapshot's layer record.
start_from() {
    local rec=$1 id=$2
    shift 2
    # shellcheck disable=SC2046
    dsec-layer ls $(jq -r '.parents[], .digest' <<<"$rec") | dsec-mount | dsec-run create --id "$id" "$@" > /dev/null
}

# make_reset_base: the layer "base" (busybox, /work/file holding "base") for the reset
# tests, and every sandbox destroyed at exit.
make_reset_base() {
    make_busybox_tree "$T/base"
    mkdir -p "$T/base/work"
    echo base > "$T/base/work/file"
    dsec-layer build "$T/base" --name base > /dev/null
    on_exit 'dsec-run ls | dsec-run destroy --force > /dev/null'
}

# gone PID: no such process, or only its zombie (the old init waits for its reaper).
gone() {
    for _ in $(seq 100); do
        [ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ] || return 0
        sleep 0.02
    done
    return 1
}
