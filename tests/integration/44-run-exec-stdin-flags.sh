#!/bin/bash
# Which stdin the command gets: relayed by default when streaming, /dev/null by default
# with --json; -i/--interactive relays, --no-stdin gives /dev/null; -i, -t, -it and -ti
# are accepted as docker users type them.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id sb > /dev/null
on_exit "dsec-run destroy --force sb > /dev/null"

stdin_of() {  # dsec-run exec's options...: what the command's fd 0 is
    echo input | timeout 30 dsec-run exec "$@" -- busybox readlink /proc/self/fd/0
}
stdin_of_json() {
    echo input | timeout 30 dsec-run exec --json "$@" -- busybox readlink /proc/self/fd/0 | jq -r .stdout
}
case $(stdin_of sb) in pipe:*) ;; *) fail "streaming: stdin is not relayed" ;; esac
[ "$(stdin_of --no-stdin sb)" = /dev/null ] || fail "--no-stdin: not /dev/null"
[ "$(stdin_of_json sb)" = /dev/null ] || fail "--json: stdin is not /dev/null by default"
case $(stdin_of_json -i sb) in pipe:*) ;; *) fail "--json -i: stdin is not relayed" ;; esac
case $(stdin_of_json --interactive sb) in pipe:*) ;; *) fail "--json --interactive: not relayed" ;; esac

# The data itself, with each spelling.
for flags in -i --interactive "-i -t" -it -ti "--interactive --tty"; do
    # shellcheck disable=SC2086
    got=$(echo hello | timeout 30 dsec-run exec $flags sb -- head -n1 | tr -d '\r') || fail "$flags: failed ($?)"
    [ "${got%%$'\n'*}" = hello ] || fail "$flags: got $got"
done
r=$(echo hello | timeout 30 dsec-run exec --json -i sb -- cat)
[ "$(echo "$r" | jq -r .stdout)" = hello ] || fail "--json -i: $r"
r=$(echo hello | timeout 30 dsec-run exec --json sb -- cat)
[ "$(echo "$r" | jq -r .stdout)" = "" ] || fail "--json without -i read stdin: $r"

# -t without -i gives a terminal too.
got=$(timeout 30 dsec-run exec -t sb -- sh -c 'test -t 0 && echo tty' < /dev/null | tr -d '\r')
[ "$got" = tty ] || fail "-t: $got"

# Usage errors (exit 2): contradictory flags, -i for a batch whose stdin holds records.
expect_exit 2 dsec-run exec -i --no-stdin sb -- true
record='{"type":"sandbox","v":1,"id":"sb"}'
expect_exit 2 dsec-run exec -i -- true <<<"$record"
expect_exit 2 dsec-run exec -t -- true <<<"$record"
echo ok
