#!/bin/bash
# dsec-run session open --pty: commands run on a terminal of the sandbox's own devpts
# (stdin, stdout and stderr; `tty` names it), output comes merged as a terminal shows it,
# state carries over, a command waiting on the terminal is timed out without ending the
# session, the master the shell holds is not handed to commands, and a command that
# closes or replaces it ends in a clear error, never a hang.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
for app in tty stty ls cat sleep; do ln -sf busybox "$T/tree/bin/$app"; done
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id pt > /dev/null
on_exit "dsec-run destroy --force pt > /dev/null"

rec=$(dsec-run session open --pty pt)
echo "$rec" | jq -e '.type == "session" and .pty == true and .state == "open"' > /dev/null || fail "open: $rec"
s=$(echo "$rec" | jq -r .id)
run() { dsec-run session exec "$s" "$@"; }
out() { run -- "$@" | jq -r .stdout; }

# A terminal on all three streams, the sandbox's own: /dev/pts/N inside, 80x24.
r=$(run -- 'tty; test -t 0 && test -t 1 && test -t 2 && echo three; stty size')
echo "$r" | jq -e '.stdout == "/dev/pts/0\r\nthree\r\n24 80\r\n" and .stderr == "" and .exit_code == 0' > /dev/null ||
    fail "terminal: $r"

# Both streams merged in order; exit status; no trailing newline needed.
r=$(run -- 'echo out; echo err >&2; printf end; (exit 4)' || true)
echo "$r" | jq -e '.stdout == "out\r\nerr\r\nend" and .exit_code == 4' > /dev/null || fail "merged output: $r"

# State carries over.
run -- 'cd /tmp; export X=7' > /dev/null
[ "$(out 'echo $X $(pwd)')" = $'7 /tmp\r' ] || fail "state did not carry over"

# The master the shell holds (descriptor 8) is not handed to commands.
[ "$(out 'ls /proc/self/fd/8 2>/dev/null || echo none')" = $'none\r' ] || fail "descriptor 8 leaked into a command"

# A command reading the terminal waits as at a prompt: the timeout ends it (and the rest
# of its list), the session and its state live on.
for reader in 'head -n1' 'read line'; do
    r=$(run --timeout 300ms -- "echo waiting; $reader; echo never" || true)
    echo "$r" | jq -e '.timed_out == true and (.stdout | startswith("waiting\r\n")) and (.stdout | contains("never") | not) and .exit_code == 137' > /dev/null ||
        fail "reader ($reader): $r"
    [ "$(out pwd)" = $'/tmp\r' ] || fail "the session did not survive a reader's timeout ($reader)"
done

# Lots of output, more than a terminal's buffer, arrives whole.
r=$(run -- 'i=0; while [ $i -lt 3000 ]; do echo line-$i; i=$((i+1)); done')
echo "$r" | jq -e '(.stdout | split("\r\n") | length) == 3001 and (.stdout | endswith("line-2999\r\n"))' > /dev/null ||
    fail "long output: $(echo "$r" | jq -c '{n: (.stdout | length), exit_code, note}')"

# The session is in ls with pty true, a plain one with pty false.
plain=$(dsec-run session open pt | jq -r .id)
dsec-run session ls pt | jq -se "(map(select(.id == \"$s\"))[0].pty == true) and (map(select(.id == \"$plain\"))[0].pty == false)" > /dev/null ||
    fail "session ls: $(dsec-run session ls pt)"
r=$(dsec-run session exec "$plain" -- 'test -t 1 || echo notty')
echo "$r" | jq -e '.stdout == "notty\n"' > /dev/null || fail "plain session: $r"

# A command cannot take the terminal from the shell: descriptor 8 is closed for it, and
# what it does to 8 is undone when it ends.
run -- 'exec 8>&-; exec 8</dev/null' > /dev/null || true
[ "$(out echo alive)" = $'alive\r' ] || fail "a command took the terminal away"
# One that closes every descriptor the shell saved while it runs (its stdin among them:
# the shell then reads the terminal and never reports) ends at its timeout like a command
# that never ends; the next call works or fails with a clear error, never hangs.
r=$(timeout 20 dsec-run session exec --timeout 1s "$s" -- 'for fd in 10 11 12 13 14 15 16 17 18 19; do eval "exec $fd>&-"; done' 2>/dev/null; echo "rc=$?")
echo "$r" | grep -q 'rc=124' && fail "closing the shell's saved descriptors: no result (hang)"
r=$(timeout 20 dsec-run session exec --timeout 1s "$s" -- echo alive 2>/dev/null; echo "rc=$?")
echo "$r" | grep -qE '"stdout":"alive\\r\\n"|"code":"(io|not_running)"|"timed_out":true' || fail "after closing saved descriptors: $r"

# close and destroy leave nothing: no shell of a session survives.
dsec-run session close "$s" "$plain" > /dev/null
[ -z "$(ls "$DSEC_RUN/sandboxes/pt/sessions")" ] || fail "session files left"
