#!/bin/bash
# --help reads plainly: value names instead of CLI11 type names, the command after "--" in
# the usage of exec and run, an example per subcommand, the exit statuses; a mistyped
# subcommand is named as such and the hint points at the help that answers it.
. "$(dirname "$0")/lib.sh"

for tool in dsec-layer dsec-mount dsec-run dsec-guard dsec-reclaim dsec-bench; do
    help=$("$tool" --help)
    grep -q '^Exit status: 0 done; 1 failed' <<<"$help" || fail "$tool --help: no exit status line"
    subs=$(awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}' <<<"$help")
    for s in "" $subs; do
        # shellcheck disable=SC2086
        text=$("$tool" $s --help)
        if grep -nE ' (TEXT|UINT|INT|FLOAT|BOOLEAN)\b|:\{|in \[[0-9]|=[0-9]{6,}' <<<"$text"; then
            fail "$tool $s --help shows CLI11 type jargon"
        fi
    done
done
for s in exec run; do
    text=$(dsec-run $s --help)
    grep -qE "^Usage: dsec-run $s \[OPTIONS\].* -- CMD \[ARG\.\.\.\]$" <<<"$text" || fail "$s usage: $(grep Usage <<<"$text")"
done
dsec-run session exec --help | grep -qE '^Usage: .*session exec .* -- CMD \[ARG\.\.\.\]$' || fail "session exec usage"
for s in create exec run cp destroy snapshot fork reset kill stats ls inspect log logs wait pool "pool fill" "pool ls" "pool drain" session "session open" "session exec" "session ls" "session close"; do
    dsec-run $s --help | grep -A2 '^Example:' | grep -q "dsec-run $s" || fail "dsec-run $s --help has no example of its own"
done
for s in build export import import-image tag rm verify gc publish ls inspect; do
    dsec-layer $s --help | grep -A2 '^Example:' | grep -q "dsec-layer $s" || fail "dsec-layer $s --help has no example of its own"
done
for s in ls release umount; do
    dsec-mount $s --help | grep -A2 '^Example:' | grep -q "dsec-mount $s" || fail "dsec-mount $s --help has no example of its own"
done
for s in check events net "net allow" "net deny" apply refresh; do
    dsec-guard $s --help | grep -A2 '^Example:' | grep -q "dsec-guard ${s%% *}" || fail "dsec-guard $s --help has no example of its own"
done
for s in compare run exec create density image import; do
    dsec-bench $s --help | grep -A2 '^Example:' | grep -q "dsec-bench $s" || fail "dsec-bench $s --help has no example of its own"
done
for s in gc idle resume ksm status swap ttl; do
    dsec-reclaim $s --help | grep -A2 '^Example:' | grep -q "dsec-reclaim $s" || fail "dsec-reclaim $s --help has no example of its own"
done
dsec-run create --help | grep -qE '^  --class CLASS +CPU class: .*\(default latency\)$' || fail "default in words: $(dsec-run create --help | grep -- --class)"

# A mistyped subcommand: named, exit 2, hint at the tool's help.
expect_exit 2 dsec-run start 2> "$T/err" > /dev/null
[ "$(head -n 1 "$T/err")" = "dsec-run: unknown subcommand 'start'" ] || fail "unknown subcommand: $(cat "$T/err")"
grep -q "^Try 'dsec-run --help' for more.$" "$T/err" || fail "hint: $(cat "$T/err")"
out=$(dsec-run start 2> /dev/null) || true
[ "$(jq -r .message <<<"$out")" = "unknown subcommand 'start'" ] || fail "record: $out"
# A bad option of a subcommand: the hint points at that subcommand's help.
expect_exit 2 dsec-run exec --bogus 2> "$T/err" > /dev/null
grep -q "^Try 'dsec-run exec --help' for more.$" "$T/err" || fail "subcommand hint: $(cat "$T/err")"
expect_exit 2 dsec-layer imprt x 2> "$T/err" > /dev/null
grep -q "unknown subcommand 'imprt'" "$T/err" || fail "dsec-layer: $(cat "$T/err")"
echo ok
