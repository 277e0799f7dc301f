#!/bin/bash
# Piped input reaches the command, and EOF on dsec-run's stdin (a pipe, /dev/null, a
# closed stdin) reaches it as EOF: the command ends instead of waiting for more.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id sb > /dev/null
on_exit "dsec-run destroy --force sb > /dev/null"

got=$(printf 'a\nb\n' | timeout 30 dsec-run exec sb -- wc -l) || fail "wc -l did not end ($?)"
[ "$got" = 2 ] || fail "wc -l counted $got"
got=$(printf 'no newline' | timeout 30 dsec-run exec sb -- cat) || fail "cat did not end ($?)"
[ "$got" = "no newline" ] || fail "cat gave $got"
got=$(timeout 30 dsec-run exec sb -- wc -c < /dev/null) || fail "/dev/null: wc did not end ($?)"
[ "$got" = 0 ] || fail "/dev/null: wc -c gave $got"
got=$(timeout 30 dsec-run exec sb -- wc -c <&-) || fail "closed stdin: wc did not end ($?)"
[ "$got" = 0 ] || fail "closed stdin: wc -c gave $got"

# Input that arrives slowly, after the command has started, is relayed as it comes.
got=$( (echo one; sleep 0.3; echo two) | timeout 30 dsec-run exec sb -- cat) || fail "slow input ($?)"
[ "$got" = "$(printf 'one\ntwo')" ] || fail "slow input gave $got"

# The command's status passes through after EOF.
printf 'x' | timeout 30 dsec-run exec sb -- sh -c 'cat > /dev/null; exit 3' && fail "status 3 lost"
[ "${PIPESTATUS[1]}" = 3 ] || fail "status ${PIPESTATUS[1]}, not 3"
echo ok
