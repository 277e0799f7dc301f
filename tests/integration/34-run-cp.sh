#!/bin/bash
# dsec-run cp: a tree into a sandbox and back, with modes, owners and symlinks kept, and
# a sandbox's symlink pointing at a host path never followed on the host.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id cpy > /dev/null
on_exit "dsec-run destroy --force cpy > /dev/null"

mkdir -p "$T/src/sub"
echo hello > "$T/src/a.txt"
chmod 0750 "$T/src/a.txt"
chown 1234:2345 "$T/src/sub"
ln -s a.txt "$T/src/link"
dsec-run cp "$T/src" cpy:/work | jq -e '.type == "copy" and .entries == 4' > /dev/null || fail "cp in"
out=$(dsec-run exec cpy -- sh -c 'cat /work/a.txt; stat -c %a /work/a.txt 2>/dev/null || ls -l /work/a.txt; ls -ln /work; ls -l /work/link')
echo "$out" | grep -qx hello || fail "content: $out"
echo "$out" | grep -q "1234 *2345.*sub" || fail "owner not kept: $out"
echo "$out" | grep -q "link -> a.txt" || fail "symlink not kept: $out"
# Into an existing directory: lands inside it under its own name.
dsec-run cp "$T/src/a.txt" cpy:/tmp > /dev/null
[ "$(dsec-run exec cpy -- cat /tmp/a.txt)" = hello ] || fail "cp into a directory"

# Out again, and a hostile symlink inside the sandbox stays a symlink on the host.
dsec-run exec cpy -- sh -c 'ln -s /etc/shadow /work/evil; mkdir /work/d; ln -s /etc /work/d/up'
dsec-run cp cpy:/work "$T/out" > /dev/null
cmp "$T/src/a.txt" "$T/out/a.txt" || fail "cp out content"
[ -L "$T/out/evil" ] && [ "$(readlink "$T/out/evil")" = /etc/shadow ] || fail "evil link not kept as a link"
[ "$(stat -c %a "$T/out/a.txt")" = 750 ] || fail "mode not kept"
[ -L "$T/out/d/up" ] || fail "directory symlink not kept as a link"
# A host destination that is a symlink (one could have come out of a sandbox) is neither
# followed nor replaced.
ln -s "$T/src" "$T/outlink"
expect_exit 1 dsec-run cp cpy:/work "$T/outlink" > /dev/null
[ -L "$T/outlink" ] && [ ! -e "$T/src/work" ] || fail "a symlink destination was followed or replaced"
expect_exit 2 dsec-run cp "$T/src" "$T/elsewhere"
expect_exit 1 dsec-run cp nosuch:/x "$T/y"
# A source that is not there is an error, not an empty copy.
expect_exit 1 dsec-run cp cpy:/no/such "$T/y" > /dev/null
expect_exit 1 dsec-run cp "$T/no-such" cpy:/tmp > /dev/null
[ ! -e "$T/y" ] || fail "something was made for a missing source"
echo ok
