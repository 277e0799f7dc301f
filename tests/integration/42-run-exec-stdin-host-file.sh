#!/bin/bash
# dsec-run exec never hands its own descriptors to the command: a host file given as
# stdin arrives through a pipe, and writing, reopening or truncating it through
# /proc/self/fd/0 from inside leaves the file as it was.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id sb > /dev/null
on_exit "dsec-run destroy --force sb > /dev/null"

printf 'host data\n' > "$T/hostfile"
cp "$T/hostfile" "$T/want"
intact() { cmp -s "$T/hostfile" "$T/want" || fail "$1 changed the host file: $(head -c 100 "$T/hostfile")"; }

# The bytes arrive, through a pipe; stdout and stderr are pipes too.
[ "$(timeout 30 dsec-run exec sb -- cat < "$T/hostfile")" = "host data" ] || fail "stdin not relayed"
for fd in 0 1 2; do
    link=$(timeout 30 dsec-run exec sb -- busybox readlink "/proc/self/fd/$fd" < "$T/hostfile")
    case $link in pipe:\[*\]) ;; *) fail "fd $fd inside is $link, not a pipe" ;; esac
done
# Nothing else is open in the command (the shell's descriptors, listed by a child of it).
fds=$(timeout 30 dsec-run exec sb -- sh -c 'busybox ls /proc/$$/fd; true' < "$T/hostfile" | tr '\n' ' ')
[ "$fds" = "0 1 2 " ] || fail "the command has descriptors $fds"

# Hostile commands, each given the host file as stdin.
for attack in \
    'echo pwned > /proc/self/fd/0' \
    'echo pwned > /tmp/p; cat /tmp/p > /proc/$$/fd/0' \
    'exec 3<>/proc/self/fd/0; echo pwned >&3' \
    'echo pwned >&0' \
    'busybox truncate -s 0 /proc/self/fd/0' \
    'busybox dd if=/dev/zero of=/proc/self/fd/0 bs=1 count=4 seek=2 conv=notrunc'; do
    timeout 30 dsec-run exec sb -- sh -c "$attack" < "$T/hostfile" > /dev/null 2>&1 || true
    intact "$attack"
    timeout 30 dsec-run exec --json -i sb -- sh -c "$attack" < "$T/hostfile" > /dev/null 2>&1 || true
    intact "--json -i: $attack"
    timeout 30 dsec-run exec -t sb -- sh -c "$attack" < "$T/hostfile" > /dev/null 2>&1 || true
    intact "-t: $attack"
done

# cat reading the pipe and writing into it feeds itself for ever: --timeout ends it.
timeout 30 dsec-run exec --timeout 1s sb -- sh -c 'cat > /proc/self/fd/0' < "$T/hostfile" > /dev/null 2>&1 || true
intact "cat > /proc/self/fd/0"
echo ok
