#!/bin/bash
# dsec-run cp --max-bytes / --max-entries, both ways: past a cap the copy stops with a
# too_large error record and what it wrote is removed (on the host, and inside the
# sandbox), while a directory that was already there keeps what it held; under the caps
# the same copies go through. Bad cap values are usage errors.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id cap > /dev/null
on_exit "dsec-run destroy --force cap > /dev/null"

too_large() {  # OUTPUT: an error record with code too_large
    jq -e 'select(.type == "error") | .code == "too_large"' <<<"$1" > /dev/null || fail "not too_large: $1"
}

# Into the sandbox.
mkdir -p "$T/src"
head -c 65536 /dev/zero > "$T/src/big"
for i in $(seq 20); do echo "$i" > "$T/src/f$i"; done
out=$(dsec-run cp --max-bytes 10K "$T/src/big" cap:/big 2> /dev/null) && fail "10K cap not applied"
too_large "$out"
out=$(dsec-run cp --max-entries 5 "$T/src" cap:/tmp 2> /dev/null) && fail "entry cap not applied"
too_large "$out"
left=$(dsec-run exec cap -- sh -c 'ls /big /tmp/src 2>&1; true')
! grep -qv 'No such file' <<<"$left" || fail "partial copy left in the sandbox: $left"
dsec-run cp --max-entries 22 --max-bytes 65600 "$T/src" cap:/tmp | jq -e '.entries == 22' > /dev/null ||
    fail "a copy just under the caps was refused"

# Out of the sandbox: nothing left on the host, an existing directory keeps its files.
dsec-run exec cap -- sh -c 'mkdir /many && for i in $(seq 30); do echo $i > /many/f$i; done'
out=$(dsec-run cp --max-entries 10 cap:/many "$T/out" 2> /dev/null) && fail "entry cap not applied out"
too_large "$out"
[ ! -e "$T/out" ] || fail "partial output left on the host: $(ls "$T/out")"
out=$(dsec-run cp --max-bytes 1K cap:/tmp/src "$T/out" 2> /dev/null) && fail "byte cap not applied out"
too_large "$out"
[ ! -e "$T/out" ] || fail "partial output left on the host: $(ls "$T/out")"
mkdir "$T/keep"
echo mine > "$T/keep/mine"
out=$(dsec-run cp --max-entries 10 cap:/many "$T/keep" 2> /dev/null) && fail "entry cap not applied (existing dir)"
too_large "$out"
[ "$(ls "$T/keep")" = mine ] && [ "$(cat "$T/keep/mine")" = mine ] || fail "existing directory damaged: $(ls "$T/keep")"
dsec-run cp --max-entries 31 cap:/many "$T/keep" | jq -e '.entries == 31' > /dev/null || fail "copy under the cap"
[ "$(cat "$T/keep/many/f30")" = 30 ] || fail "copy under the cap incomplete"

# To stdout: the stream is cut short and the error is on stderr only.
rc=0
dsec-run cp --max-entries 10 cap:/many - > "$T/cut.tar" 2> "$T/cut.err" || rc=$?
[ "$rc" = 1 ] || fail "cp to stdout past the cap exited $rc"
grep -q 'max-entries' "$T/cut.err" || fail "no error on stderr: $(cat "$T/cut.err")"
! grep -q '"type"' "$T/cut.tar" || fail "an error record inside the tar stream"

expect_exit 2 dsec-run cp --max-entries 0 cap:/many "$T/x"
expect_exit 2 dsec-run cp --max-bytes 12X cap:/many "$T/x"
echo ok
