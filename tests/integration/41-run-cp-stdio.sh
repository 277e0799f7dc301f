#!/bin/bash
# dsec-run cp with "-": ID:/path to stdout as a tar stream (the record on stderr), and a
# tar stream on stdin extracted into a directory of the sandbox, with the same rules as a
# copy of files: the hostile archives of tests/data/hostile are refused with nothing
# written anywhere, devices skipped, set-id bits stripped, owners kept.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
for app in ln chown chmod find stat; do ln -sf busybox "$T/tree/bin/$app"; done
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id sio > /dev/null
on_exit "dsec-run destroy --force sio > /dev/null"

# Out: a tar on stdout, named after the source, the record on stderr.
dsec-run exec sio -- sh -c 'mkdir -p /w/sub && echo hi > /w/sub/a && ln -s /etc/passwd /w/l && ln /w/sub/a /w/h'
dsec-run cp sio:/w - > "$T/w.tar" 2> "$T/w.rec" || fail "cp to stdout: $(cat "$T/w.rec")"
jq -e '.type == "copy" and .entries == 5 and .dst == "-"' "$T/w.rec" > /dev/null || fail "record: $(cat "$T/w.rec")"
[ "$(tar -tf "$T/w.tar" | sort | tr '\n' ' ')" = "w/ w/h w/l w/sub/ w/sub/a " ] || fail "listing: $(tar -tf "$T/w.tar")"
mkdir "$T/x" && tar -xf "$T/w.tar" -C "$T/x"
[ "$(cat "$T/x/w/sub/a")" = hi ] && [ "$(readlink "$T/x/w/l")" = /etc/passwd ] || fail "tar content"
[ "$(stat -c %i "$T/x/w/sub/a")" = "$(stat -c %i "$T/x/w/h")" ] || fail "hard link not kept"

# In: a tar on stdin into an existing directory, owners kept.
mkdir -p "$T/in/d"
echo data > "$T/in/d/f"
chown 1234:2345 "$T/in/d/f"
dsec-run exec sio -- mkdir /dst
tar -C "$T/in" -cf - . | dsec-run cp - sio:/dst | jq -e '.entries == 2' > /dev/null || fail "cp from stdin"
[ "$(dsec-run exec sio -- stat -c '%u:%g' /dst/d/f)" = 1234:2345 ] || fail "owner not kept from stdin"
[ "$(dsec-run exec sio -- cat /dst/d/f)" = data ] || fail "content from stdin"
tar -C "$T/in" -cf - . | expect_exit 1 dsec-run cp - sio:/dst/d/f > /dev/null  # not a directory
expect_exit 2 dsec-run cp - - < /dev/null

# Hostile streams: refused, and nothing written inside the sandbox or on the host.
H="$DATA/hostile"
etc_before=$(dsec-run exec sio -- sh -c 'find /etc /tmp | sort; cat /etc/passwd')
for f in traversal traversal-nested absolute symlink-escape symlink-relative-escape dir-then-symlink \
    hardlink-escape hardlink-absolute hardlink-missing hardlink-through-symlink truncated; do
    dsec-run exec sio -- sh -c "rm -rf /h && mkdir /h"
    out=$(dsec-run cp - sio:/h < "$H/$f.tar" 2> /dev/null) && fail "$f.tar was accepted: $out"
    jq -e 'select(.type == "error") | .code == "bad_input"' <<<"$out" > /dev/null || fail "$f.tar: $out"
    [ -z "$(dsec-run exec sio -- find /h -mindepth 1)" ] || fail "$f.tar left: $(dsec-run exec sio -- find /h)"
done
[ ! -e /tmp/dsec-hostile-absolute ] && [ ! -e /tmp/dsec-hostile-rel ] || fail "a hostile stream wrote on the host"
[ "$(dsec-run exec sio -- sh -c 'find /etc /tmp | sort; cat /etc/passwd')" = "$etc_before" ] ||
    fail "a hostile stream changed the sandbox"
out=$(dsec-run cp - sio:/h < "$H/not-a-tar.bin" 2> /dev/null) && fail "not-a-tar accepted"
jq -e '.code == "bad_input"' <<<"$out" > /dev/null || fail "not-a-tar: $out"
out=$(dsec-run cp --max-entries 10 - sio:/h < "$H/many-entries.tar" 2> /dev/null) && fail "entry cap from stdin"
jq -e '.code == "too_large"' <<<"$out" > /dev/null || fail "many-entries: $out"

# Devices are skipped, set-id bits stripped.
rec=$(dsec-run cp - sio:/h < "$H/device-char.tar") || fail "device-char.tar: $rec"
jq -e '.entries == 0 and .skipped[0].what == "character device"' <<<"$rec" > /dev/null || fail "device: $rec"
rec=$(dsec-run cp - sio:/h < "$H/setid.tar") || fail "setid.tar: $rec"
jq -e '.neutralized_total == 3' <<<"$rec" > /dev/null || fail "setid: $rec"
[ "$(dsec-run exec sio -- stat -c %a /h/suid /h/sgid /h/shared | tr '\n' ' ')" = "755 755 775 " ] ||
    fail "set-id bits kept: $(dsec-run exec sio -- stat -c %a /h/suid /h/sgid /h/shared)"
echo ok
