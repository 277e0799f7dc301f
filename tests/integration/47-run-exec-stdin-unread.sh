#!/bin/bash
# A command that never reads stdin, or closes it, while dsec-run has endless input does
# not deadlock and is not reported as an error; nor does a reader of dsec-run's output
# that goes away early (the command then gets SIGPIPE, as in a shell pipeline).
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id sb > /dev/null
on_exit "dsec-run destroy --force sb > /dev/null"

# (yes itself dies of SIGPIPE when dsec-run exits: only dsec-run's status counts.)
set +o pipefail
yes | timeout 30 dsec-run exec sb -- true 2> "$T/err" || fail "yes | true: exit $?"
[ ! -s "$T/err" ] || fail "yes | true: $(cat "$T/err")"
yes | timeout 30 dsec-run exec sb -- sleep 1 || fail "yes | sleep 1: exit $?"
yes | timeout 30 dsec-run exec -t sb -- true > /dev/null || fail "yes | -t true: exit $?"

# The command closes its stdin early and goes on: EPIPE on our side, quietly.
got=$(yes | timeout 30 dsec-run exec sb -- sh -c 'exec <&-; sleep 0.5; echo done' 2> "$T/err") \
    || fail "closed stdin: exit $?"
[ "$got" = done ] || fail "closed stdin: got $got"
[ ! -s "$T/err" ] || fail "closed stdin: $(cat "$T/err")"
got=$(yes | timeout 30 dsec-run exec sb -- head -n 2 | tr '\n' ' ') || fail "yes | head: exit $?"
[ "$got" = "y y " ] || fail "yes | head: got $got"

# Our stdout goes away: the command is not left writing for ever.
got=$({ rc=0; timeout 30 dsec-run exec sb -- yes || rc=$?; echo "$rc" > "$T/rc"; } | head -n 1)
[ "$got" = y ] || fail "exec yes | head: got $got"
[ "$(cat "$T/rc")" = 141 ] || fail "exec yes | head: exit $(cat "$T/rc"), not 141 (SIGPIPE)"
[ "$(dsec-run exec sb -- sh -c 'ps | grep -c "[y]es" || true')" = 0 ] || fail "yes still runs in the sandbox"
echo ok
