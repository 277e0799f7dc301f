#!/bin/bash
# The command log: every exec, session command and cp, in order, with hashes, counts and
# capped output; log -f follows it; nothing inside reaches it; a snapshot records its
# position; destroy --keep-log keeps it.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
for app in printf ls cut; do ln -sf busybox "$T/tree/bin/$app"; done
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id lg --workdir /tmp > /dev/null
on_exit "dsec-run destroy --force lg > /dev/null"

[ -z "$(dsec-run log lg)" ] || fail "a new sandbox has a log"
dsec-run log lg -f > "$T/follow.jsonl" &
follower=$!
on_exit "kill $follower 2>/dev/null || true"

# One record per command, whatever the command did.
printf 'in!' | dsec-run exec lg -- sh -c 'cat > /dev/null; printf hello; printf oops >&2; exit 3' > /dev/null 2>&1 || true
dsec-run exec --json --user 7:8 lg -- head -c 10000 /dev/zero > /dev/null
s=$(dsec-run session open lg | jq -r .id)
dsec-run session exec "$s" -- 'cd /root; echo hi' > /dev/null
dsec-run session exec "$s" -- 'pwd' > /dev/null
echo data > "$T/f"
dsec-run cp "$T/f" lg:/tmp/f > /dev/null
dsec-run cp lg:/tmp/f "$T/g" > /dev/null
expect_exit 1 dsec-run cp lg:/no/such "$T/h" > /dev/null 2>&1

dsec-run log lg > "$T/log.jsonl"
[ "$(jq -r .kind "$T/log.jsonl" | tr '\n' ' ')" = "exec exec session session cp cp cp " ] ||
    fail "kinds: $(jq -c '{kind}' "$T/log.jsonl")"
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
jq -se --arg out "$(sha hello)" --arg err "$(sha oops)" '.[0] | .type == "log" and .id == "lg" and
    .argv == ["sh","-c","cat > /dev/null; printf hello; printf oops >&2; exit 3"] and .cwd == "/tmp" and
    .user == "0:0" and .exit_code == 3 and .bytes_in == 3 and .bytes_out == 9 and .stdout == "hello" and
    .stderr == "oops" and .stdout_sha256 == $out and .stderr_sha256 == $err and (.time | test("Z$"))' "$T/log.jsonl" > /dev/null ||
    fail "exec record: $(head -1 "$T/log.jsonl")"
zeros=$(head -c 10000 /dev/zero | sha256sum | cut -d' ' -f1)
jq -se --arg z "$zeros" '.[1] | .user == "7:8" and .bytes_out == 10000 and (.stdout | length) == 4096 and
    .stdout_truncated == true and .stdout_sha256 == $z' "$T/log.jsonl" > /dev/null || fail "capped output: $(sed -n 2p "$T/log.jsonl" | cut -c1-300)"
jq -se --arg s "$s" '.[2] | .session == $s and .command == "cd /root; echo hi" and .cwd == "/tmp" and .stdout == "hi\n"' "$T/log.jsonl" > /dev/null ||
    fail "session record: $(sed -n 3p "$T/log.jsonl")"
jq -se '.[3].cwd == "/root"' "$T/log.jsonl" > /dev/null || fail "session cwd: $(sed -n 4p "$T/log.jsonl")"
jq -se '.[4].bytes_in == 5 and .[5].bytes_out == 5 and .[6].exit_code == 1 and .[6].error == "not_found"' "$T/log.jsonl" > /dev/null ||
    fail "cp records: $(tail -3 "$T/log.jsonl")"

# -f printed the same records as they came.
for i in $(seq 1 50); do [ "$(wc -l < "$T/follow.jsonl")" -ge 7 ] && break; sleep 0.1; done
cmp -s "$T/log.jsonl" "$T/follow.jsonl" || fail "log -f: $(diff "$T/log.jsonl" "$T/follow.jsonl" | head)"

# Nothing inside can read or write it: it is not in the sandbox's view, and the
# sandbox's processes hold no descriptor of it.
log="$DSEC_RUN/sandboxes/lg/log.jsonl"
[ "$(stat -c '%a %u' "$log")" = "600 0" ] || fail "log mode: $(stat -c '%a %u' "$log")"
r=$(dsec-run exec lg -- sh -c "cat $log 2>&1; ls -l /proc/*/fd 2>/dev/null | grep -c log.jsonl" || true)
echo "$r" | grep -q "No such file" || fail "the log is visible inside: $r"
[ "$(echo "$r" | tail -1)" = 0 ] || fail "a process inside holds the log: $r"

# A snapshot records where the log stood.
size=$(stat -c %s "$log")
dsec-run snapshot lg | jq -e ".log_position == $size" > /dev/null || fail "snapshot log_position (log was $size bytes)"

# destroy --keep-log keeps it whole; the follower ends with the sandbox.
cp "$log" "$T/before-destroy"
dsec-run destroy --keep-log "$T/kept" lg > /dev/null
cmp -s "$T/kept/lg.log.jsonl" "$T/before-destroy" || fail "kept log differs"
[ "$(wc -l < "$T/kept/lg.log.jsonl")" = 8 ] || fail "kept log: $(wc -l < "$T/kept/lg.log.jsonl") records"
for i in $(seq 1 30); do kill -0 $follower 2>/dev/null || break; sleep 0.1; done
! kill -0 $follower 2>/dev/null || fail "log -f did not end with the sandbox"
expect_exit 1 dsec-run log lg > /dev/null
echo ok
