#!/bin/bash
# Run by anyone but root, every tool says up front that it needs root (exit 1, an error
# record of code "permission", one line on stderr), never not_found, busy or an empty
# list; --help and --version work for everyone.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id mine > /dev/null
on_exit "dsec-run destroy --force mine > /dev/null"

# nobody, with the test's environment (DSEC_ROOT and DSEC_RUN point at root's state).
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@"; }
chmod 755 "$T"
check() {  # TOOL ARGS...: refused as it should be
    local out err rc=0
    out=$(as_nobody "$@" 2> "$T/err") || rc=$?
    err=$(cat "$T/err")
    [ "$rc" = 1 ] || fail "$*: exit $rc as nobody, want 1 (stdout: $out, stderr: $err)"
    jq -e --arg t "$1" '.type == "error" and .code == "permission" and .tool == $t' <<<"$out" > /dev/null ||
        fail "$*: record as nobody: $out"
    grep -q "^$1: $1 needs root" <<<"$err" || fail "$*: stderr as nobody: $err"
}
check dsec-run ls
check dsec-run inspect mine
check dsec-run destroy mine
check dsec-run exec mine -- true
check dsec-layer ls
check dsec-mount ls
check dsec-bench compare
for tool in dsec-run dsec-layer dsec-mount dsec-bench; do
    as_nobody "$tool" --help > /dev/null || fail "$tool --help as nobody"
    as_nobody "$tool" --version | grep -q . || fail "$tool --version as nobody"
done
# Nothing was touched: the sandbox is still there and running.
dsec-run inspect mine | jq -e '.state == "running"' > /dev/null || fail "the sandbox suffered"
echo ok
