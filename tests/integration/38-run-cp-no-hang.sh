#!/bin/bash
# dsec-run cp never hangs on what a sandbox puts in its way: a FIFO given as the source,
# a file swapped for a FIFO again and again while copies run, and a file the sandbox keeps
# writing to (at most the size it had when opened is copied, so the copy ends and stays
# under its cap).
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
for app in mkfifo stat; do ln -sf busybox "$T/tree/bin/$app"; done
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id fif > /dev/null
on_exit "dsec-run destroy --force fif > /dev/null"

dsec-run exec fif -- sh -c 'mkdir /d && mkfifo /d/fifo && echo x > /d/f'
rc=0
rec=$(timeout 20 dsec-run cp fif:/d/fifo "$T/f1") || rc=$?
[ "$rc" != 124 ] || fail "cp of a FIFO hung"
[ "$rc" = 0 ] || fail "cp of a FIFO failed ($rc): $rec"
[ ! -e "$T/f1" ] || fail "the FIFO was copied"
jq -e '.skipped[0].what == "fifo"' <<<"$rec" > /dev/null || fail "FIFO not listed: $rec"

# A file that turns into a FIFO and back, as fast as the sandbox can.
dsec-run exec fif -- sh -c 'while :; do rm -f /d/f; mkfifo /d/f; rm -f /d/f; echo data > /d/f; done' \
    > /dev/null 2>&1 &
swapper=$!
on_exit "kill $swapper 2>/dev/null; wait $swapper 2>/dev/null"
sleep 0.5
fifos=0
for i in $(seq 25); do
    rc=0
    rec=$(timeout 20 dsec-run cp fif:/d "$T/o$i" 2> /dev/null) || rc=$?
    [ "$rc" != 124 ] || fail "cp hung on a file swapped for a FIFO (run $i)"
    [ "$rc" = 0 ] || fail "cp failed ($rc): $rec"
    [ ! -p "$T/o$i/f" ] || fail "a FIFO was made on the host"
    # Data, or empty: `echo data > f` creates the file before it writes to it.
    [ ! -e "$T/o$i/f" ] || [ "$(cat "$T/o$i/f")" = data ] || [ ! -s "$T/o$i/f" ] || fail "odd content: $(cat "$T/o$i/f")"
    if jq -e '[.skipped[] | select(.path == "o'"$i"'/f")] | length > 0' <<<"$rec" > /dev/null; then
        fifos=$((fifos + 1))
    fi
    rm -rf "$T/o$i"
done
kill $swapper
wait $swapper 2> /dev/null || true
echo "the swapped file was skipped in $fifos of 25 copies"

# A file the sandbox keeps appending to while it is copied.
dsec-run exec fif -- sh -c 'while :; do echo 0123456789abcdef; done > /d/grow' > /dev/null 2>&1 &
writer=$!
on_exit "kill $writer 2>/dev/null; wait $writer 2>/dev/null"
for _ in $(seq 50); do
    [ "$(dsec-run exec fif -- stat -c %s /d/grow 2> /dev/null || echo 0)" -gt 100000 ] && break
    sleep 0.2
done
rc=0
rec=$(timeout 20 dsec-run cp fif:/d/grow "$T/grow") || rc=$?
[ "$rc" != 124 ] || fail "cp of a growing file hung"
[ "$rc" = 0 ] || fail "cp of a growing file failed ($rc): $rec"
copied=$(stat -c %s "$T/grow")
[ "$copied" -gt 0 ] && [ "$(jq .bytes <<<"$rec")" = "$copied" ] || fail "copied $copied bytes: $rec"
now=$(dsec-run exec fif -- stat -c %s /d/grow)
[ "$copied" -le "$now" ] || fail "copied more ($copied) than the file holds ($now)"
# Under a cap smaller than the file, the copy stops and leaves nothing.
expect_exit 1 timeout 20 dsec-run cp --max-bytes 50K fif:/d/grow "$T/grow2" > "$T/err.json"
jq -e '.code == "too_large"' "$T/err.json" > /dev/null || fail "no too_large: $(cat "$T/err.json")"
[ ! -e "$T/grow2" ] || fail "partial output left"
kill $writer
wait $writer 2> /dev/null || true
echo ok
