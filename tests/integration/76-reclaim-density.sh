#!/bin/bash
# Measures what reclaim gives back: N idle sandboxes (default 40) each hold 20 MiB in a
# process, 10 MiB of it identical across sandboxes (a text file from the layer) and 10
# MiB their own (random hex). Host memory they hold (their cgroups' charge plus what the
# zram swap uses) is measured as created, after KSM merged them, and after `idle` paused
# them (zram swap set up here and removed at exit); then the first exec's latency into a
# paused sandbox (p50, p99) against a running one, and the cost of a gc pass over N live
# sandboxes. Fails when paused sandboxes hold more than 0.4 of what they held.
. "$(dirname "$0")/lib.sh"
# Whatever a failure leaves running goes (gc also takes what lost its state).
on_exit 'dsec-run ls 2> /dev/null | jq -r .id | xargs -r dsec-run destroy -f > /dev/null 2>&1; dsec-reclaim gc --grace 0s > /dev/null 2>&1'

n=${DSEC_TEST_SANDBOXES:-40}
ksm=/sys/kernel/mm/ksm
[ -e /sys/block/zram0 ] || skip "no zram device"
grep -qE '^(/dev)?/zram0 ' /proc/swaps && skip "/dev/zram0 is in use as swap already"
[ "$(cat /sys/block/zram0/disksize)" = 0 ] || skip "/dev/zram0 is set up already"
[ -w $ksm/run ] || skip "the kernel has no KSM"
read -r run0 scan0 sleep0 <<< "$(cat $ksm/run) $(cat $ksm/pages_to_scan) $(cat $ksm/sleep_millisecs)"
on_exit "echo $scan0 > $ksm/pages_to_scan; echo $sleep0 > $ksm/sleep_millisecs; echo $run0 > $ksm/run"
on_exit "dsec-reclaim swap --off > /dev/null"
# Room for every sandbox's pushed-out pages (zram allocates only what it stores).
dsec-reclaim swap --zram "$(( n > 128 ? n * 16 : 2048 ))M" > /dev/null

make_busybox_tree "$T/tree"
mkdir -p "$T/tree/data"
head -c 5242880 /dev/urandom | busybox hexdump -v -e '/1 "%02x"' > "$T/tree/data/same.txt"
cat > "$T/tree/holder" << 'EOS'
#!/bin/sh
x=$(cat /data/same.txt)
s=$(head -c 3 /dev/urandom | busybox od -An -tu4 | busybox tr -d ' ')
y=$(seq $((s * 1000)) $((s * 1000 + 1300000)) | head -c 10485760)
mkfifo /tmp/hold
touch /tmp/ready
read -r _ < /tmp/hold  # until killed, with no CPU (lib.sh's make_holder says why)
EOS
chmod +x "$T/tree/holder"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-layer ls base | dsec-mount --count "$n" | dsec-run create -P 2 --memory 128M > "$T/sb.jsonl"
[ "$(jq -s 'map(select(.state == "running")) | length' "$T/sb.jsonl")" = "$n" ] || fail "create"
dsec-run exec -P 2 --json -- sh -c '/holder > /dev/null 2>&1 & while [ ! -e /tmp/ready ]; do sleep 0.1; done' < "$T/sb.jsonl" \
    | jq -se "length == $n and all(.exit_code == 0)" > /dev/null || fail "holders"

# Host memory the sandboxes hold: their cgroups' charge, plus the zram device's own use.
held() {
    local sum=0 m
    for m in $(dsec-reclaim status | jq -r 'select(.type == "sandbox") | .memory'); do sum=$((sum + m)); done
    echo $((sum + $(dsec-reclaim swap | jq .used)))
}
mib() { echo "$(( $1 / 1048576 )) MiB"; }
before=$(held)

echo 4000 > $ksm/pages_to_scan
echo 10 > $ksm/sleep_millisecs
dsec-reclaim ksm on > /dev/null
prev=-1
for _ in $(seq 120); do
    now=$(cat $ksm/pages_sharing)
    [ "$now" -gt 0 ] && [ "$now" = "$prev" ] && break
    prev=$now
    sleep 1
done
merged=$(held)
saved=$(dsec-reclaim ksm status | jq .saved)

start=$(date +%s%N)
dsec-reclaim idle --after 0s --sample 1s > "$T/idle.jsonl"
idle_ms=$(( ($(date +%s%N) - start) / 1000000 ))
# A sandbox whose CPU use was not flat over the sample waits for the next pass, as under cron.
[ "$(wc -l < "$T/idle.jsonl")" = "$n" ] || dsec-reclaim idle --after 0s --sample 1s >> "$T/idle.jsonl"
[ "$(wc -l < "$T/idle.jsonl")" = "$n" ] || fail "paused $(wc -l < "$T/idle.jsonl") of $n; not: $(dsec-reclaim status | jq -c 'select(.type == "sandbox" and .state != "paused")'); $(grep -v paused "$T/idle.jsonl")"
paused=$(held)
zram=$(dsec-reclaim swap)
dsec-reclaim ksm off > /dev/null

# First exec into each paused sandbox, then into each running one.
lat() {
    local id s
    for id in $(jq -r .id "$T/sb.jsonl"); do
        s=$(date +%s%N)
        dsec-run exec "$id" -- true
        echo $(( ($(date +%s%N) - s) / 1000 ))
    done | sort -n > "$T/lat"
    echo "p50 $(( $(sed -n "$(( (n + 1) / 2 ))p" "$T/lat") / 1000 )) ms, p99 $(( $(sed -n "$(( (n * 99 + 99) / 100 ))p" "$T/lat") / 1000 )) ms"
}
first=$(lat)
warm=$(lat)

start=$(date +%s%N)
[ -z "$(dsec-reclaim gc)" ] || fail "gc removed something of live sandboxes"
gc_ms=$(( ($(date +%s%N) - start) / 1000000 ))
dsec-run destroy -P 2 < "$T/sb.jsonl" > /dev/null

echo "$n sandboxes x 20 MiB (10 MiB alike): held $(mib "$before") as created, $(mib "$merged") with KSM (saved $(mib "$saved")),"
echo "  $(mib "$paused") paused by idle ($idle_ms ms) = $(awk "BEGIN {printf \"%.2f\", $paused / $before}") of before"
echo "  zram: $(echo "$zram" | jq -r '"\(.stored / 1048576 | floor) MiB stored in \(.used / 1048576 | floor) MiB"') ($(cat /sys/block/zram0/comp_algorithm | grep -o '\[[a-z0-9-]*\]'))"
echo "  first exec into a paused sandbox: $first; into a running one: $warm"
echo "  gc pass over $n live sandboxes: $gc_ms ms"
awk "BEGIN {exit !($paused <= 0.4 * $before)}" || fail "paused sandboxes hold more than 0.4 of before"
