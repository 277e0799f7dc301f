#!/bin/bash
# Records read by a person and by a program: "type", "id" and "v" lead every line; an error
# record names the item of a batch it concerns in "id"; a record newer than this dsec
# reads is refused with a clear error, not half understood.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id box1 > "$T/created"
on_exit "dsec-run destroy --force box1 > /dev/null"
grep -q '^{"type":"sandbox","id":"box1","v":1,' "$T/created" || fail "create record: $(cat "$T/created")"
# Fields are always there: no oom yet is 0, not absent.
dsec-run ls | jq -e '.oom_kills == 0 and (.memory | type) == "number" and (.cpu_s | type) == "number"
    and has("last_exec")' > /dev/null || fail "ls fields: $(dsec-run ls)"
dsec-run inspect box1 | jq -e '.oom_kills == 0 and has("memory")' > /dev/null || fail "inspect fields"
line=$(dsec-layer ls base)
grep -q '^{"type":"layer",' <<<"$line" || fail "layer record: $line"
line=$(dsec-run exec --json box1 -- true)
grep -q '^{"type":"result","id":"box1","v":1,' <<<"$line" || fail "result record: $line"

# ls filters: state, age window, layer (by name, digest, digest prefix), all at once.
d=$(dsec-layer ls -q base)
[ "$(dsec-run ls -q --state running --layer base)" = box1 ] || fail "ls --state --layer"
[ "$(dsec-run ls -q --layer "$d")" = box1 ] || fail "ls --layer DIGEST"
[ "$(dsec-run ls -q --layer "${d:7:16}" --newer-than 10m)" = box1 ] || fail "ls --layer PREFIX --newer-than"
[ -z "$(dsec-run ls -q --older-than 1h)" ] || fail "ls --older-than"
[ -z "$(dsec-run ls -q --state dead)" ] || fail "ls --state dead"
[ -z "$(dsec-run ls -q --layer nosuchlayer)" ] || fail "ls --layer of another layer"
expect_exit 2 dsec-run ls --state sleeping > /dev/null 2>&1
expect_exit 2 dsec-run ls --older-than soon > /dev/null 2>&1
# A batch that fails on one item: its error record says which.
out=$(printf '{"type":"sandbox","v":1,"id":"box1"}\n{"type":"sandbox","v":1,"id":"gone1"}\n' |
    dsec-run exec -P 2 --json -- true 2> "$T/err") && fail "exec in a missing sandbox succeeded"
[ "$(jq -r 'select(.type == "error") | .id' <<<"$out")" = gone1 ] || fail "batch error record: $out"
[ "$(jq -r 'select(.type == "result") | .id' <<<"$out")" = box1 ] || fail "the good item was lost: $out"
grep -q '^{"type":"error","id":"gone1","v":1,' <<<"$out" || fail "error line order: $out"
[ "$(jq -r 'select(.type == "error") | .tool' <<<"$out")" = dsec-run ] || fail "batch error record without tool: $out"
# What the tool was doing is a field of its own ("context"), apart from the code, path
# and message; the line on stderr says it all.
on_exit "dsec-run destroy --force box2 > /dev/null 2>&1 || true"
out=$(dsec-run create --layers base --id box2 --bind "$T/nowhere:/data" 2> "$T/err") && fail "a missing bind source was bound"
jq -e '.code == "not_found" and .tool == "dsec-run" and .path == "'"$T/nowhere"'" and
    (.context | index("--bind source")) != null and (.message | contains("--bind source"))' <<<"$out" > /dev/null ||
    fail "error record context: $out"
grep -q -- "--bind source" "$T/err" || fail "stderr line without its context: $(cat "$T/err")"
out=$(dsec-run destroy gone2 2> /dev/null) && fail "destroy of an unknown id succeeded"
[ "$(jq -r .id <<<"$out")" = gone2 ] || fail "destroy error record: $out"
out=$(dsec-run kill gone3 2> /dev/null) && fail "kill of an unknown id succeeded"
[ "$(jq -r .id <<<"$out")" = gone3 ] || fail "kill error record: $out"

# Newer records than this build knows: refused at once, nothing created.
dsec-layer ls base | dsec-mount > "$T/rootfs"
jq -c '.v = 2' "$T/rootfs" > "$T/rootfs-v2"
out=$(dsec-run create < "$T/rootfs-v2" 2> "$T/err") && fail "a v2 record was accepted"
[ "$(jq -r .code <<<"$out")" = unsupported_version ] || fail "v2 refusal: $out"
grep -q 'newer than this dsec reads' "$T/err" || fail "v2 message: $(cat "$T/err")"
[ "$(dsec-run ls | wc -l)" = 1 ] || fail "a sandbox was made from a refused record"
jq -c '.v = "one"' "$T/rootfs" | dsec-run create > /dev/null 2>&1 && fail "a text \"v\" was accepted"
out=$(jq -c '.v = 9' "$T/rootfs" | dsec-mount 2> /dev/null) && fail "dsec-mount read a v9 record"
[ "$(jq -r .code <<<"$out")" = unsupported_version ] || fail "dsec-mount v9 refusal: $out"
dsec-mount release "$(jq -r .id "$T/rootfs")" > /dev/null 2>&1 || true
echo ok
