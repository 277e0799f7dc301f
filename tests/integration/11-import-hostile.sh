#!/bin/bash
# Hostile archives (tests/data/hostile, made by tests/data/make-hostile.py): each is
# refused with a bad_input record, nothing outside the staging tree is touched and
# nothing is left in the store; set-id bits and privileged xattrs are neutralized.
. "$(dirname "$0")/lib.sh"

H="$DATA/hostile"
passwd_before=$(sha256sum /etc/passwd)
clean_store() {
    [ -z "$(ls "$DSEC_ROOT/layers/tmp" 2>/dev/null)" ] || fail "$1: staging left behind: $(ls "$DSEC_ROOT/layers/tmp")"
    [ -z "$(find "$DSEC_ROOT/layers" -maxdepth 1 -name '*.erofs' -o -maxdepth 1 -name '*.json')" ] ||
        fail "$1: something was published"
    [ -z "$(ls "$DSEC_ROOT/layers/names" 2>/dev/null)" ] || fail "$1: a name was written"
}
refuse() {  # FILE PATTERN [import options]: refused with bad_input and a message matching PATTERN
    local f=$1 pattern=$2
    shift 2
    local out
    out=$(dsec-layer import "$H/$f" --name hostile "$@" 2>/dev/null) && fail "$f was imported"
    jq -e --arg p "$pattern" 'select(.type == "error") | .code == "bad_input" and (.message | test($p))' \
        <<<"$out" >/dev/null || fail "$f: unclear error: $out"
    clean_store "$f"
}

refuse traversal.tar 'climbs out'
refuse traversal-nested.tar 'climbs out'
refuse absolute.tar 'absolute path'
refuse symlink-escape.tar 'through a symlink'
refuse symlink-relative-escape.tar 'through a symlink'
refuse dir-then-symlink.tar 'through a symlink'
refuse hardlink-escape.tar 'climbs out'
refuse hardlink-absolute.tar 'absolute path'
refuse hardlink-missing.tar 'not \(yet\) in the archive'
refuse hardlink-through-symlink.tar 'through a symlink'
refuse device-char.tar 'device nodes'
refuse device-block.tar 'device nodes'
refuse long-name.tar 'longer than 255'
refuse long-path.tar 'longer than 4096'
refuse not-a-tar.bin 'cannot read'
refuse whiteout-dotdot.tar 'malformed whiteout' --oci-layer
[ "$(sha256sum /etc/passwd)" = "$passwd_before" ] || fail "/etc/passwd changed"
[ ! -e /tmp/dsec-hostile-absolute ] && [ ! -e /tmp/dsec-hostile-rel ] && [ ! -e "$T/escape" ] ||
    fail "a file was written outside the tree"

# Set-id bits are stripped (directories keep setgid: it only picks the group of new files).
rec=$(dsec-layer import "$H/setid.tar" --name setid)
jq -e '.neutralized_total == 2 and ([.neutralized[].what] | sort) == ["setgid", "setuid"]' <<<"$rec" >/dev/null ||
    fail "set-id not reported: $rec"
mkdir "$T/x"
fsck.erofs --extract="$T/x" "$(jq -r .image <<<"$rec")" >/dev/null
[ "$(stat -c %a "$T/x/suid") $(stat -c %a "$T/x/sgid") $(stat -c %a "$T/x/shared")" = "755 755 2775" ] ||
    fail "modes: $(stat -c %a "$T/x/suid" "$T/x/sgid" "$T/x/shared")"

# Capabilities and overlay attributes from an archive are dropped; user.* is kept.
rec=$(dsec-layer import "$H/xattrs.tar" --name xattrs)
jq -e '([.neutralized[].what] | sort) == ["xattr:security.capability", "xattr:trusted.overlay.redirect"]' \
    <<<"$rec" >/dev/null || fail "xattrs not reported: $rec"
echo ok
