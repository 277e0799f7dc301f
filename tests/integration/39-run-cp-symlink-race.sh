#!/bin/bash
# Copying into a sandbox while it swaps the directories on the way for symlinks (to its
# /, to a host path, to /etc) as fast as it can never writes outside the destination:
# the host's canary directory and the sandbox's /etc stay as they were, and the payload's
# marker file is only ever found below the destination.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
for app in ln find sort; do ln -sf busybox "$T/tree/bin/$app"; done
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id race > /dev/null
on_exit "dsec-run destroy --force race > /dev/null"

# Where a copy that followed a symlink on the host would land.
mkdir -p "$T/hostdir/etc"
echo canary > "$T/hostdir/etc/canary"
host_before=$(cd "$T/hostdir" && find . | sort)
on_exit "rm -f /etc/dsec-race-marker"
# The payload: pl/d/etc/dsec-race-marker, with enough beside it to keep each copy busy.
mkdir -p "$T/pl/d/etc" "$T/pl/d/more"
echo marker > "$T/pl/d/etc/dsec-race-marker"
for i in $(seq 60); do echo "$i" > "$T/pl/d/more/f$i"; done
etc_before=$(dsec-run exec race -- sh -c 'find /etc | sort; cat /etc/passwd')
dsec-run exec race -- mkdir -p /dst

# The sandbox's side: d becomes a symlink to /, to the host path, then a directory again;
# now and then pl itself becomes a symlink to /etc. Each round is counted, in a file
# replaced whole (killed between a truncation and its write, the loop could leave it empty).
dsec-run exec race -- sh -c 'n=0; while :; do
        rm -rf /dst/pl/d; ln -s / /dst/pl/d
        rm -f /dst/pl/d; ln -s '"$T/hostdir"' /dst/pl/d
        rm -f /dst/pl/d; mkdir -p /dst/pl/d
        n=$((n + 1)); [ $((n % 5)) = 0 ] && { rm -rf /dst/pl; ln -s /etc /dst/pl; rm -f /dst/pl; }
        echo $n > /tmp/rounds.new; mv /tmp/rounds.new /tmp/rounds
    done' > /dev/null 2>&1 &
racer=$!
on_exit "kill $racer 2>/dev/null; wait $racer 2>/dev/null"
sleep 0.5

ok=0 refused=0
for _ in $(seq 30); do
    rc=0
    out=$(timeout 30 dsec-run cp "$T/pl" race:/dst 2> /dev/null) || rc=$?
    [ "$rc" != 124 ] || fail "cp hung"
    if [ "$rc" = 0 ]; then
        ok=$((ok + 1))
    else
        jq -e 'select(.type == "error")' <<<"$out" > /dev/null || fail "cp failed without an error record: $out"
        refused=$((refused + 1))
    fi
done
kill $racer
wait $racer 2> /dev/null || true
rounds=$(dsec-run exec race -- cat /tmp/rounds)
[ "$rounds" -gt 10 ] || fail "the sandbox's loop hardly ran ($rounds rounds)"
echo "copies: $ok completed, $refused refused; the sandbox swapped $rounds times"

[ "$(cd "$T/hostdir" && find . | sort)" = "$host_before" ] || fail "the host's canary directory changed"
[ "$(cat "$T/hostdir/etc/canary")" = canary ] || fail "the host's canary changed"
[ ! -e /etc/dsec-race-marker ] || fail "the copy wrote into the host's /etc"
etc_after=$(dsec-run exec race -- sh -c 'find /etc | sort; cat /etc/passwd')
[ "$etc_after" = "$etc_before" ] || fail "the sandbox's /etc changed: $etc_after"
stray=$(dsec-run exec race -- find / -xdev -name dsec-race-marker | grep -v '^/dst/pl/d/etc/' || true)
[ -z "$stray" ] || fail "the marker landed outside the destination: $stray"
echo ok
