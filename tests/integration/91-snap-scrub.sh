#!/bin/bash
# dsec-run snapshot --policy: the paths the policy's "scrub" names are absent from the
# image itself (read with fsck.erofs --extract, not through a sandbox), a scrubbed path
# that base also holds is hidden by a whiteout, other policy keys are ignored, and a bad
# policy is refused before anything is frozen or written.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/snap-lib.sh"

command -v fsck.erofs > /dev/null || skip "no fsck.erofs (erofs-utils) to read the image with"
make_busybox_tree "$T/base"
mkdir -p "$T/base/srv"
echo base-answer > "$T/base/srv/reference"
dsec-layer build "$T/base" --name base > /dev/null
on_exit 'dsec-run ls | dsec-run destroy --force > /dev/null'

dsec-run create --layers base --id builder > /dev/null
dsec-run exec builder -- sh -c 'mkdir -p /task/answers/deep /task/src && echo 42 > /task/answers/deep/key &&
    echo solution > /task/answer.txt && echo code > /task/src/main.c && echo notes > /task/answer.txt.bak &&
    echo changed > /srv/reference'
cat > "$T/policy.json" <<'JSON'
{"network": {"allow": ["10.0.0.0/8"]}, "hidden": ["/etc/shadow"],
 "scrub": ["/task/answers", "/task/answer.txt", "/srv/reference", "/not/there"]}
JSON
rec=$(dsec-run snapshot builder --policy "$T/policy.json" --name task) || fail "snapshot --policy"
jq -e '.scrubbed == ["srv/reference", "task/answer.txt", "task/answers"]' <<<"$rec" > /dev/null \
    || fail "scrubbed list: $(jq -c .scrubbed <<<"$rec")"

# The image itself, extracted on the host.
image=$(jq -r .image <<<"$rec")
fsck.erofs --extract="$T/x" "$image" > /dev/null 2>&1 || fail "fsck.erofs cannot read the snapshot image"
[ -f "$T/x/task/src/main.c" ] && [ -f "$T/x/task/answer.txt.bak" ] || fail "unscrubbed files missing from the image"
[ ! -e "$T/x/task/answers" ] || fail "scrubbed directory in the image"
[ ! -e "$T/x/task/answer.txt" ] || fail "scrubbed file in the image"
grep -rq -e 42 -e solution -e changed "$T/x" && fail "scrubbed content found in the image"
# In base too: a whiteout, so a sandbox on base + snapshot does not see base's copy.
[ "$(stat -c '%F %t:%T' "$T/x/srv/reference")" = "character special file 0:0" ] \
    || fail "no whiteout over base's /srv/reference: $(stat -c '%F %t:%T' "$T/x/srv/reference")"

start_from "$rec" agent
dsec-run exec agent -- test ! -e /task/answers || fail "scrubbed directory visible"
dsec-run exec agent -- test ! -e /task/answer.txt || fail "scrubbed file visible"
dsec-run exec agent -- test ! -e /srv/reference || fail "base's copy of a scrubbed path shows through"
[ "$(dsec-run exec agent -- cat /task/src/main.c)" = code ] || fail "unscrubbed file lost"
# The builder itself is untouched by the scrub.
[ "$(dsec-run exec builder -- cat /task/answer.txt)" = solution ] || fail "scrub changed the builder sandbox"

# Bad policies: one error line, exit 1, no layer, nothing left in staging.
layers=$(dsec-layer ls | jq -r .digest | sort)
echo '{"scrub": "/task"}' > "$T/bad1.json"
echo '{"scrub": ["task/relative"]}' > "$T/bad2.json"
echo 'not json' > "$T/bad3.json"
for bad in bad1 bad2 bad3 missing; do
    out=$(dsec-run snapshot builder --policy "$T/$bad.json" 2> "$T/err") && fail "$bad policy accepted"
    jq -e '.type == "error" and (.code == "bad_input" or .code == "not_found")' <<<"$out" > /dev/null \
        || fail "$bad policy: record $out"
    [ "$(wc -l < "$T/err")" = 1 ] || fail "$bad policy: stderr is not one line: $(cat "$T/err")"
done
[ "$(dsec-layer ls | jq -r .digest | sort)" = "$layers" ] || fail "a refused snapshot added a layer"
[ -z "$(ls "$DSEC_ROOT/layers/tmp")" ] || fail "staging left: $(ls "$DSEC_ROOT/layers/tmp")"
echo ok
