#!/bin/bash
# dsec-reclaim idle, with compressed swap in memory (zram, set up here and removed at
# exit): an idle sandbox is frozen and its memory pushed out (reclaimed bytes measured);
# exec, cp and resume bring it back with its files, processes and memory intact; a
# sandbox with a command running is not paused. Prints memory before/after and the first
# exec's latency after a pause.
. "$(dirname "$0")/lib.sh"
# Whatever a failure leaves running goes (gc also takes what lost its state).
on_exit 'dsec-run ls 2> /dev/null | jq -r .id | xargs -r dsec-run destroy -f > /dev/null 2>&1; dsec-reclaim gc --grace 0s > /dev/null 2>&1'

[ -e /sys/block/zram0 ] || skip "no zram device"
grep -qE '^(/dev)?/zram0 ' /proc/swaps && skip "/dev/zram0 is in use as swap already"
[ "$(cat /sys/block/zram0/disksize)" = 0 ] || skip "/dev/zram0 is set up already"
on_exit "dsec-reclaim swap --off > /dev/null"
dsec-reclaim swap --zram 1G | jq -e '.active == true and .disksize == 1073741824' > /dev/null || fail "swap --zram"
expect_exit 1 dsec-reclaim swap --zram 1G

make_busybox_tree "$T/tree"
# A process holding 24 MB of anonymous memory (a shell variable) until asked for its length.
# It waits on a FIFO, using no CPU: a loop forking a sleep every second (a fork copies the
# 24 MB's page tables) could use 1% of a CPU on a slow host, and not look idle.
cat > "$T/tree/holder" << 'EOS'
#!/bin/sh
x=$(yes 0123456789abcdef | head -c 24000000)
mkfifo /tmp/ask
touch /tmp/ready
while read -r _ < /tmp/ask; do echo ${#x} > /tmp/len.new; mv /tmp/len.new /tmp/len; done
EOS
chmod +x "$T/tree/holder"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id idle1 --memory 256M > /dev/null
dsec-run create --layers base --id busy1 > /dev/null
# The holder, and 16 MB in a tmpfs file.
dsec-run exec idle1 -- sh -c 'head -c 16000000 /dev/urandom > /dev/shm/blob; busybox md5sum /dev/shm/blob > /root/sum
    /holder > /dev/null 2>&1 & echo $! > /tmp/holder
    while [ ! -e /tmp/ready ]; do sleep 0.1; done' || fail "setting up idle1"
holder=$(dsec-run exec idle1 -- cat /tmp/holder)
sleep 1
dsec-run exec busy1 -- sleep 4 &
runner=$!

before=$(dsec-reclaim status | jq -c 'select(.id == "idle1")')
dsec-reclaim idle --after 0s --sample 1s > "$T/idle.jsonl"
jq -se 'map(.id) == ["idle1"]' "$T/idle.jsonl" > /dev/null || fail "paused: $(cat "$T/idle.jsonl") (busy1 must not be)"
reclaimed=$(jq -r .reclaimed "$T/idle.jsonl")
[ "$reclaimed" -gt $((20 << 20)) ] || fail "only $reclaimed bytes reclaimed: $(cat "$T/idle.jsonl")"
after=$(dsec-reclaim status | jq -c 'select(.id == "idle1")')
echo "$after" | jq -e '.state == "paused" and .swapped > 0' > /dev/null || fail "status after idle: $after"
dsec-run ls | jq -se 'map(select(.id == "idle1"))[0].state == "paused"' > /dev/null || fail "ls does not say paused"
wait $runner || fail "busy1's command"

# The first exec resumes it: processes, memory and files as they were.
start=$(date +%s%N)
dsec-run exec idle1 -- true || fail "exec into a paused sandbox"
first_ms=$(( ($(date +%s%N) - start) / 1000000 ))
st=$(dsec-reclaim status | jq -c 'select(.id == "idle1")')
[ "$(echo "$st" | jq -r .state)" = running ] || fail "not resumed by exec: $st"
dsec-run exec idle1 -- sh -c 'busybox md5sum -c /root/sum > /dev/null' || fail "the tmpfs file changed"
dsec-run exec idle1 -- sh -c "kill -0 $holder && echo > /tmp/ask && while [ ! -e /tmp/len ]; do sleep 0.1; done"
[ "$(dsec-run exec idle1 -- cat /tmp/len)" = 24000000 ] || fail "the holder's memory came back wrong"

# resume by hand, and cp, wake it as well.
dsec-reclaim idle --after 0s --sample 1s | jq -e '.id == "idle1"' > /dev/null || fail "second pause"
dsec-reclaim resume idle1 | jq -e '.event == "resumed" and .was_paused == true' > /dev/null || fail "resume"
dsec-reclaim resume idle1 | jq -e '.was_paused == false' > /dev/null || fail "resume of a running sandbox"
dsec-reclaim idle --after 0s --sample 1s | jq -e '.id == "idle1"' > /dev/null || fail "third pause"
echo hello > "$T/f"
dsec-run cp "$T/f" idle1:/root/f > /dev/null || fail "cp into a paused sandbox"
[ "$(dsec-run exec idle1 -- cat /root/f)" = hello ] || fail "cp"
expect_exit 1 dsec-reclaim resume nosuch

# A paused sandbox is destroyed like any other.
dsec-reclaim idle --after 0s --sample 1s | jq -e '.id == "idle1"' > /dev/null || fail "fourth pause"
dsec-run destroy idle1 busy1 | jq -se 'length == 2 and all(.state == "destroyed")' > /dev/null || fail "destroy of a paused sandbox"
dsec-reclaim swap --off | jq -e '.active == false' > /dev/null || fail "swap --off"
! grep -q zram0 /proc/swaps || fail "zram swap left on"
echo "ok: idle1 $(echo "$before" | jq -c '{memory, resident, page_cache, swapped}') -> $(echo "$after" | jq -c '{memory, resident, page_cache, swapped}'), reclaimed $reclaimed bytes; first exec after pause ${first_ms} ms"
