#!/bin/bash
# For a person at a terminal, `ls` prints an aligned table and an error only its line on
# stderr; piped, records as always; -q prints ids (digests) only, --json forces records.
. "$(dirname "$0")/lib.sh"

command -v script > /dev/null || skip "no script(1) (util-linux) to give a terminal"
on_tty() { script -qec "$*" /dev/null | tr -d '\r'; }  # stdout (and stderr) on a pty
make_busybox_tree "$T/tree"
d=$(dsec-layer build "$T/tree" --name base | jq -r .digest)
dsec-layer tag base base-v2 > /dev/null
dsec-run create --layers base --id box1 --label team=a > /dev/null
on_exit "dsec-run destroy --force box1 > /dev/null"

out=$(on_tty dsec-run ls)
head -n 1 <<<"$out" | grep -qE '^ID +STATE +AGE +MEM +CPU +LABELS$' || fail "dsec-run ls on a terminal: $out"
grep -qE '^box1 +running +[0-9]+s +[0-9.]+[KMG]? +[0-9.]+s +team=a$' <<<"$out" || fail "dsec-run ls row: $out"
out=$(on_tty dsec-layer ls)
grep -qE "^base,base-v2 +${d:7:12} +[0-9.]+[KMG] +[0-9]+$" <<<"$out" || fail "dsec-layer ls on a terminal: $out"
[ "$(on_tty dsec-run ls --json | jq -r .id)" = box1 ] || fail "--json on a terminal"
[ "$(dsec-run ls -q)" = box1 ] || fail "dsec-run ls -q: $(dsec-run ls -q)"
[ "$(dsec-layer ls -q base)" = "$d" ] || fail "dsec-layer ls -q: $(dsec-layer ls -q base)"
[ "$(dsec-run ls | jq -r .id)" = box1 ] || fail "piped: not records"
# An error on a terminal: one line, no record.
out=$(on_tty dsec-run inspect nosuch) && fail "inspect of an unknown id succeeded"
[ "$out" = 'dsec-run: nosuch: no sandbox "nosuch" (unknown or destroyed)' ] || fail "error on a terminal: $out"
out=$(dsec-run inspect nosuch 2> /dev/null) && fail "inspect of an unknown id succeeded"
[ "$(jq -r .code <<<"$out")" = not_found ] || fail "piped error record: $out"

# Progress, on a terminal only: an import from a pipe shows bytes and rate (its size is
# not known), then the phase that builds and hashes the image.
head -c 3M /dev/urandom > "$T/blob"
tar -C "$T" -cf "$T/big.tar" blob
out=$(on_tty "cat $T/big.tar | dsec-layer import - --name piped > /dev/null")
grep -qE 'importing [0-9.]+[KM]?B \([0-9.]+[KMG]?B/s\)' <<<"$out" || fail "no bytes and rate for a piped import: $out"
grep -q 'importing: building and hashing the image' <<<"$out" || fail "no phase line: $out"
err=$(cat "$T/big.tar" | dsec-layer import - --name piped2 2>&1 > /dev/null)
[ -z "$err" ] || fail "progress drawn on a pipe: $err"
echo ok
