#!/bin/bash
# With -t the command's stdin is a pseudo-terminal, which has no half-close: EOF on
# dsec-run's stdin is typed as the terminal's EOF character, so a reader ends rather
# than hangs, whether the input is empty, ends with a newline or ends mid-line.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id sb > /dev/null
on_exit "dsec-run destroy --force sb > /dev/null"

timeout 30 dsec-run exec -t sb -- cat < /dev/null > "$T/out" || fail "-t cat </dev/null: exit $?"
timeout 30 dsec-run exec -t sb -- cat <&- > "$T/out" || fail "-t cat with stdin closed: exit $?"
timeout 30 dsec-run exec -it sb -- cat < /dev/null > "$T/out" || fail "-it cat </dev/null: exit $?"
timeout 30 dsec-run exec -t --no-stdin sb -- cat > "$T/out" || fail "-t --no-stdin cat: exit $?"

# The terminal echoes the input and cat repeats it: "hi" twice, then the end.
echo hi | timeout 30 dsec-run exec -t sb -- cat > "$T/out" || fail "echo hi | -t cat: exit $?"
[ "$(tr -d '\r' < "$T/out" | grep -c '^hi$')" = 2 ] || fail "echo hi | -t cat: $(od -c "$T/out" | head)"
# Mid-line: the first EOF character hands over "abc", the second is the EOF.
printf abc | timeout 30 dsec-run exec -t sb -- sh -c 'cat > /tmp/got; echo; echo "got=$(cat /tmp/got)"' > "$T/out" \
    || fail "printf abc | -t: exit $?"
tr -d '\r' < "$T/out" | grep -qx 'got=abc' || fail "printf abc | -t: $(od -c "$T/out" | head)"
# A shell with a line editor (raw mode, where ^D is EOF only at an empty line, and a ^D
# typed before it switched reads as NUL) ends too: EOF is typed again while it reads.
got=$(printf 'echo from-sh\n' | timeout 30 dsec-run exec -t sb -- sh | tr -d '\r') || fail "-t sh: exit $?"
grep -qx from-sh <<<"$got" || fail "-t sh: $got"
timeout 30 dsec-run exec -t sb -- sh < /dev/null > "$T/out" || fail "-t sh </dev/null: exit $?"
got=$(printf 'sleep 0.3; echo slept\n' | timeout 30 dsec-run exec -t sb -- sh | tr -d '\r') || fail "-t sh, sleep: exit $?"
grep -qx slept <<<"$got" || fail "-t sh, sleep: $got"
# Reads after the first EOF end too, as on a closed pipe.
got=$(echo one | timeout 30 dsec-run exec -t sb -- sh -c 'cat > /dev/null; cat > /dev/null; echo both' | tr -d '\r') \
    || fail "-t, two readers: exit $?"
grep -qx both <<<"$got" || fail "-t, two readers: $got"

# The terminal is the sandbox's own (its devpts): `tty` names it, and it belongs to the
# user the command runs as; nothing of the host's /dev/pts is in there.
got=$(timeout 30 dsec-run exec -t sb -- busybox tty < /dev/null | tr -d '\r')
[[ $got == /dev/pts/[0-9]* ]] || fail "tty inside -t: $got"
got=$(timeout 30 dsec-run exec -t --user 1000:1000 sb -- sh -c 'stat -c %u "$(busybox tty)"' < /dev/null | tr -d '\r')
[ "$got" = 1000 ] || fail "the pty of a --user 1000 exec is owned by $got"

# The sandbox owns its /dev: a /dev/ptmx swapped for a file or a FIFO gets the exec a clear
# error, neither a hang nor a descriptor of the sandbox's choosing on the host.
for kind in file fifo; do
    dsec-run exec sb -- sh -c "rm -f /dev/ptmx /tmp/bait; if [ $kind = file ]; then echo x > /tmp/bait; \
        else busybox mkfifo /tmp/bait; fi; ln -s /tmp/bait /dev/ptmx" || fail "could not plant the $kind"
    rc=0
    timeout 20 dsec-run exec -t sb -- true < /dev/null > /dev/null 2> "$T/err" || rc=$?
    [ "$rc" = 1 ] || fail "exec -t with /dev/ptmx a $kind: exit $rc ($(cat "$T/err"))"
    grep -q "a terminal inside the sandbox" "$T/err" || fail "exec -t with /dev/ptmx a $kind: $(cat "$T/err")"
done
dsec-run exec sb -- true || fail "the sandbox does not work after the failed -t execs"
echo ok
