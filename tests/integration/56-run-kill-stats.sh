#!/bin/bash
# dsec-run kill signals every command in a sandbox but its init (the sandbox lives on);
# dsec-run stats reports its resource use now.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id k > /dev/null
on_exit "dsec-run destroy --force k > /dev/null"

dsec-run exec k -- sh -c 'sleep 300 & sleep 300 & echo started' > /dev/null
count() { dsec-run exec k -- ps | grep -c '[s]leep 300' || true; }
[ "$(count)" = 2 ] || fail "the sleepers did not start"
rec=$(dsec-run stats k)
jq -e '.type == "stats" and .id == "k" and .state == "running" and .processes >= 3 and .memory_bytes > 0
    and .cpu_s >= 0 and .oom_kills == 0' <<<"$rec" > /dev/null || fail "stats: $rec"

rec=$(dsec-run kill -s TERM k)
jq -e '.type == "killed" and .signal == 15 and .processes == 2' <<<"$rec" > /dev/null || fail "kill -s TERM: $rec"
for _ in $(seq 50); do [ "$(count)" = 0 ] && break; sleep 0.1; done
[ "$(count)" = 0 ] || fail "the sleepers survived SIGTERM"
dsec-run inspect k | jq -e '.state == "running"' > /dev/null || fail "kill took the sandbox down"
dsec-run exec k -- true || fail "the sandbox does not work after kill"

dsec-run exec k -- sh -c 'sleep 300 &' > /dev/null
[ "$(dsec-run kill k | jq .processes)" = 1 ] || fail "kill (default KILL)"
expect_exit 2 dsec-run kill -s NOPE k 2> /dev/null
expect_exit 1 dsec-run kill nosuch 2> /dev/null
expect_exit 1 dsec-run stats nosuch 2> /dev/null
echo ok
