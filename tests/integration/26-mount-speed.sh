#!/bin/bash
# Speed: the first mount of a layer, and rootfs records from an already-mounted stack.
# The amortized cost per sandbox must stay well under a millisecond.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/a"
mkdir -p "$T/b/opt" "$T/c/work"
for i in $(seq 1 200); do echo "$i" > "$T/b/opt/f$i"; done
echo task > "$T/c/work/task"
for l in a b c; do dsec-layer build "$T/$l" --name "$l" >/dev/null; done
dsec-layer ls a b c > "$T/stack.jsonl"

ms() { echo $(( ($2 - $1) / 1000000 )); }

# First mounts: one process mounting three layers (process start included), then the
# same run with the layers mounted; the difference is the cost of the three mounts.
t0=$(date +%s%N)
dsec-mount --id first < "$T/stack.jsonl" >/dev/null
t1=$(date +%s%N)
dsec-mount --id again < "$T/stack.jsonl" >/dev/null
t2=$(date +%s%N)
echo "first mount of 3 layers (one dsec-mount run): $(ms "$t0" "$t1") ms; mounted already: $(ms "$t1" "$t2") ms;" \
    "per first layer mount: $(( (t1 - t0 - (t2 - t1)) / 3000 )) us"

# 1,000 and 10,000 records from the mounted stack.
for n in 1000 10000; do
    t0=$(date +%s%N)
    dsec-layer ls a b c | dsec-mount --count "$n" > "$T/out.$n"
    t1=$(date +%s%N)
    [ "$(wc -l < "$T/out.$n")" = "$n" ] || fail "expected $n records"
    us=$(( (t1 - t0) / 1000 / n ))
    echo "dsec-layer ls a b c | dsec-mount --count $n: $(ms "$t0" "$t1") ms total, $us us per record"
    eval "per_$n=$us"
done
# The same with the uppers on a tmpfs: what is left is dsec-mount's own cost, the rest
# is the three mkdir(2) per sandbox on the root's filesystem.
mkdir -p "$T/tmproot" && mount -t tmpfs speed-root "$T/tmproot"
t0=$(date +%s%N)
dsec-mount --root "$T/tmproot" --store "$DSEC_ROOT/layers" --count 10000 < "$T/stack.jsonl" > /dev/null
t1=$(date +%s%N)
echo "same, uppers on tmpfs: $(ms "$t0" "$t1") ms total, $(( (t1 - t0) / 10000000 )) us per record"
# The host's mount table did not grow with the records.
[ "$(grep -c " $DSEC_RUN/layers/[0-9a-f]" /proc/self/mountinfo)" = 3 ] || fail "mount table grew"
[ "$per_10000" -lt 1000 ] || fail "amortized $per_10000 us per record: not under a millisecond"
echo ok
