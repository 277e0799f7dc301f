#!/bin/bash
# dsec-run snapshot: what a sandbox wrote (files created, modified, deleted, a deleted
# directory, a directory replaced by a file and the reverse, an opaque directory, hard
# links, xattrs, a sparse file, owners) shows exactly the same in a sandbox started from
# the snapshot, with or without --disk; the same files give the same digest, an export
# imported into another store keeps it and starts the same; nothing written gives an
# empty layer; a set-id bit is neutralised unless --keep-special.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/snap-lib.sh"

make_snap_base
on_exit 'dsec-run ls | dsec-run destroy --force > /dev/null'

# An empty upper: an empty layer stacked on base, not an error.
dsec-run create --layers base --id empty > /dev/null
rec=$(dsec-run snapshot empty) || fail "snapshot of an untouched sandbox"
jq -e '.type == "layer" and .files == 0 and .sandbox == "empty" and (.parents | length) == 1' <<<"$rec" > /dev/null \
    || fail "empty snapshot record: $rec"
[ "$(jq -r '.parents[0]' <<<"$rec")" = "$(dsec-layer ls base | jq -r .digest)" ] || fail "parent is not base: $rec"

digests=()
for mode in plain disk; do
    opts=()
    [ $mode = disk ] && opts=(--disk 64M)
    dsec-run create --layers base --id "src-$mode" "${opts[@]}" > /dev/null
    dsec-run exec "src-$mode" -- sh -c "$SNAP_CHANGES" || fail "$mode: changes inside the sandbox"
    dsec-run exec "src-$mode" -- sh -c 'echo x > /work/suid && chmod 4755 /work/suid'
    dsec-run exec "src-$mode" -- sleep 1000 &
    sleeper=$!
    # Running, not still starting: this checks that a live process survives the snapshot.
    for _ in $(seq 200); do
        dsec-run exec "src-$mode" -- sh -c 'ps | grep -q "[s]leep 1000"' && break
        sleep 0.05
    done
    rec=$(dsec-run snapshot "src-$mode" --name "snap-$mode") || fail "$mode: snapshot"
    jq -e --arg n "snap-$mode" '.type == "layer" and .name == $n and (.digest | startswith("sha256:"))
        and .neutralized_total == 1 and .neutralized[0].path == "work/suid" and .neutralized[0].what == "setuid"
        and .frozen_ms >= 0 and (.image | test("\\.erofs$"))' <<<"$rec" > /dev/null || fail "$mode: record: $rec"
    # Thawed: the sandbox runs on, its sleeper too.
    dsec-run exec "src-$mode" -- true || fail "$mode: sandbox not usable after the snapshot"
    kill -0 $sleeper 2>/dev/null || fail "$mode: a process of the sandbox died during the snapshot"
    kill $sleeper 2>/dev/null; wait $sleeper 2>/dev/null || true
    # A second snapshot of the same files: the same digest.
    again=$(dsec-run snapshot "src-$mode" | jq -r .digest)
    [ "$again" = "$(jq -r .digest <<<"$rec")" ] || fail "$mode: same files, another digest: $again vs $rec"
    digests+=("$again")

    start_from "$rec" "copy-$mode"
    want=$(manifest "src-$mode" | grep -v '^./suid')
    got=$(manifest "copy-$mode" | grep -v '^./suid')
    [ "$want" = "$got" ] || fail "$mode: the copy differs:
$(diff <(echo "$want") <(echo "$got"))"
    grep -q '^./sparse regular file 644 0:0 20971525 1$' <<<"$got" || fail "$mode: sparse file: $(grep sparse <<<"$got")"
    grep -q '^./created regular file 644 1000:1001 ' <<<"$got" || fail "$mode: owner of created"
    grep -q 'user.colour="blue"' <<<"$got" || fail "$mode: xattr lost"
    grep -q "h1/h2 same inode: yes" <<<"$got" || fail "$mode: hard link became two files"
    [ "$(dsec-run exec "copy-$mode" -- ls /work/opaque)" = new ] || fail "$mode: opaque directory shows base's entries"
    [ "$(dsec-run exec "copy-$mode" -- stat -c %a /work/suid)" = 755 ] || fail "$mode: setuid bit kept"
    dsec-run exec "copy-$mode" -- test ! -e /work/deldir || fail "$mode: deleted directory is back"
    dsec-run exec "copy-$mode" -- test ! -e /work/delete || fail "$mode: deleted file is back"
done
# (Plain and --disk sandboxes made their files at other moments: their mtimes, kept in
# the image, differ, and so do their digests.) The files keep their mtimes:
[ "$(dsec-run exec copy-plain -- stat -c %Y /work)" = "$(dsec-run exec src-plain -- stat -c %Y /work)" ] ||
    fail "a directory's mtime changed through the snapshot"

# --keep-special keeps the set-id bit.
rec=$(dsec-run snapshot src-plain --keep-special)
jq -e '.neutralized_total == 0' <<<"$rec" > /dev/null || fail "--keep-special still neutralised: $rec"
start_from "$rec" special
[ "$(dsec-run exec special -- stat -c %a /work/suid)" = 4755 ] || fail "--keep-special lost the setuid bit"

# Export, import into another store: same digest, starts the same.
digest=${digests[0]}
dsec-layer export "$digest" > "$T/snap.tar.zst"
dsec-layer export base > "$T/base.tar.zst"
other="$T/other-store"
for f in base snap; do dsec-layer --store "$other" import "$T/$f.tar.zst" > "$T/$f.rec"; done
[ "$(jq -r .digest "$T/snap.rec")" = "$digest" ] || fail "export/import changed the digest: $(cat "$T/snap.rec")"
[ "$(jq -r .digest "$T/base.rec")" = "$(dsec-layer ls base | jq -r .digest)" ] || fail "base changed digest on import"
dsec-layer --store "$other" ls "$(jq -r .digest "$T/base.rec")" "$digest" | dsec-mount --store "$other" \
    | dsec-run --store "$other" create --id imported > /dev/null
got=$(manifest imported | grep -v '^./suid')
[ "$want" = "$got" ] || fail "started from the imported snapshot, the files differ:
$(diff <(echo "$want") <(echo "$got"))"
echo ok
