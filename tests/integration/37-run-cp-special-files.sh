#!/bin/bash
# dsec-run cp with special files: out of a sandbox, a setuid-root program arrives without
# its setuid bit, setgid and sticky bits go too, files belong to the caller (not to the
# sandbox's owners), and a character device and a FIFO are skipped (never made on the
# host) and listed in the record, on disk and in a tar on stdout alike. Into a sandbox,
# setuid/setgid bits are stripped while owners are kept, and a host FIFO is skipped.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
for app in ln mknod mkfifo chmod chown stat; do ln -sf busybox "$T/tree/bin/$app"; done
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id spc > /dev/null
on_exit "dsec-run destroy --force spc > /dev/null"

# A device: no sandbox may make one (its user namespace forbids it), so it is put straight
# in the upper directory, before anything inside has looked at /x.
upper=$(dsec-run inspect spc | jq -r .rootfs.upper)
mkdir -p "$upper/x"
mknod "$upper/x/null" c 1 3
dsec-run exec spc -- mknod /x/null2 c 1 3 > /dev/null 2>&1 && fail "mknod of a device inside the sandbox succeeded"
dsec-run exec spc -- sh -c 'mkdir -p /x/sub && echo su > /x/su && chown 0:0 /x/su && chmod 4755 /x/su &&
    echo g > /x/sub/g && chown 1234:2345 /x/sub/g && chmod 2750 /x/sub/g && chmod 1777 /x/sub && mkfifo /x/fifo'
dsec-run exec spc -- sh -c '[ -c /x/null ] && [ -p /x/fifo ] && [ -u /x/su ]' || fail "set-up inside the sandbox"

rec=$(timeout 60 dsec-run cp spc:/x "$T/out") || fail "cp out failed: $rec"
[ "$(cat "$T/out/su")" = su ] || fail "su not copied"
[ "$(stat -c %a "$T/out/su")" = 755 ] || fail "setuid bit kept: $(stat -c %a "$T/out/su")"
[ "$(stat -c %a "$T/out/sub/g")" = 750 ] || fail "setgid bit kept: $(stat -c %a "$T/out/sub/g")"
[ "$(stat -c %a "$T/out/sub")" = 777 ] || fail "sticky bit kept: $(stat -c %a "$T/out/sub")"
[ "$(stat -c %u:%g "$T/out/sub/g")" = "$(id -u):$(id -g)" ] || fail "the sandbox's owner was reproduced"
[ ! -e "$T/out/null" ] && [ ! -L "$T/out/null" ] || fail "a device was made on the host"
[ ! -e "$T/out/fifo" ] || fail "a FIFO was made on the host"
jq -e '.skipped_total == 2 and ([.skipped[].what] | sort) == ["character device", "fifo"]
       and ([.skipped[].path] | sort) == ["out/fifo", "out/null"]' <<<"$rec" > /dev/null || fail "skipped: $rec"
jq -e '([.neutralized[].what] | sort) == ["setgid", "setuid", "sticky"] and .neutralized_total == 3' \
    <<<"$rec" > /dev/null || fail "neutralized: $rec"

# The device itself as the source: skipped, nothing made.
rec=$(dsec-run cp spc:/x/null "$T/dev") || fail "cp of a device failed: $rec"
[ ! -e "$T/dev" ] || fail "the device was copied"
jq -e '.entries == 0 and .skipped[0].what == "character device"' <<<"$rec" > /dev/null || fail "device: $rec"

# The same rules for a tar on stdout: numeric owners the caller's, no set-id bits, no device.
dsec-run cp spc:/x - > "$T/x.tar" 2> "$T/x.err" || fail "cp to stdout: $(cat "$T/x.err")"
listing=$(tar --numeric-owner -tvf "$T/x.tar")
grep -q '^-rwxr-xr-x 0/0 .* x/su$' <<<"$listing" || fail "su in the tar: $listing"
! grep -qE '^[cbp]|x/null|x/fifo' <<<"$listing" || fail "special files in the tar: $listing"
! grep -qE '^.{3}[sS]|^.{6}[sS]|^.{9}[tT]' <<<"$listing" || fail "set-id or sticky bits in the tar: $listing"
! grep -q 1234 <<<"$listing" || fail "the sandbox's owner in the tar: $listing"

# Into a sandbox: owners kept, set-id bits stripped, a host FIFO skipped.
mkdir "$T/in"
echo prog > "$T/in/prog"
chown 1234:2345 "$T/in/prog"
chmod 6755 "$T/in/prog"
mkfifo "$T/in/pipe"
rec=$(timeout 60 dsec-run cp "$T/in" spc:/) || fail "cp in failed: $rec"
got=$(dsec-run exec spc -- sh -c 'stat -c "%a %u:%g" /in/prog; [ -e /in/pipe ] && echo pipe-made; true')
[ "$got" = "755 1234:2345" ] || fail "copied in: $got"
jq -e '.neutralized_total == 2 and .skipped[0].what == "fifo" and .skipped[0].path == "in/pipe"' \
    <<<"$rec" > /dev/null || fail "cp in record: $rec"
echo ok
