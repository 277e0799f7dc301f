#!/bin/bash
# Every subcommand and long option a tool's --help shows appears in its man page and in
# its bash, zsh and fish completions.
. "$(dirname "$0")/lib.sh"

# Long options from the "Options:" section of one --help text (not from the examples).
long_options() {
    awk '/^Options:/{on=1; next} /^[A-Z][a-z]*:/{on=0} on && /^ +-/{print $1}' |
        grep -oE -- '--[a-z][a-z0-9-]*' | grep -vxE -- '--(help|version)' | sort -u || true
}
subcommands() {
    awk '/^Subcommands:/{on=1; next} /^[A-Z][a-z]*:/{on=0} on && /^  [a-z]/{print $1}'
}
# Each file is read once, and matched in the shell: thousands of checks, a grep each took
# most of this test's time.
declare -A text
has_word() {  # FILE WORD: WORD appears, not as part of a longer name
    [ -n "${text[$1]+set}" ] || text[$1]=$(< "$1")
    local re="(^|[^a-z0-9-])$2([^a-z0-9-]|\$)"
    [[ ${text[$1]} =~ $re ]]
}

problems=0
complain() { echo "missing: $*" >&2; problems=$((problems + 1)); }
checked=0
for bin in "$DSEC_BIN"/dsec-*; do
    tool=$(basename "$bin")
    case $tool in dsec-unit|dsec-init|dsec-probe) continue ;; esac
    [ -x "$bin" ] || continue
    man="$DSEC_SRC/man/$tool.1"
    bash_c="$DSEC_SRC/completions/bash/$tool"
    zsh_c="$DSEC_SRC/completions/zsh/_$tool"
    fish_c="$DSEC_SRC/completions/fish/$tool.fish"
    # One version everywhere: --version and the man page's title line.
    version=$("$bin" --version)
    [[ $version =~ ^$tool\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || complain "$tool --version prints \"$version\""
    grep -q "^\.TH .* \"dsec ${version#* }\"" "$man" 2>/dev/null || complain "$tool: $man does not carry ${version#* }"
    for f in "$man" "$bash_c" "$zsh_c" "$fish_c"; do
        [ -f "$f" ] || { complain "$tool: $f"; continue 2; }
    done
    plain_man="$T/$tool.man"
    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$man" > "$plain_man"
    help=$("$bin" --help)
    subs=$(subcommands <<<"$help")
    for s in $subs; do
        for f in "$plain_man" "$bash_c" "$zsh_c" "$fish_c"; do
            has_word "$f" "$s" || complain "$tool: subcommand $s in $f"
        done
    done
    # Subcommands of subcommands too (dsec-run session open, ...).
    nested=""
    for s in $subs; do
        for n in $("$bin" "$s" --help | subcommands); do
            for f in "$plain_man" "$bash_c" "$zsh_c" "$fish_c"; do
                has_word "$f" "$n" || complain "$tool: subcommand $s $n in $f"
            done
            nested="$nested $s/$n"
        done
    done
    for s in "" $subs $nested; do
        # shellcheck disable=SC2086
        for opt in $("$bin" ${s/\// } --help | long_options); do
            checked=$((checked + 1))
            name=${opt#--}
            has_word "$plain_man" "$opt" || complain "$tool $s: $opt in man page"
            has_word "$bash_c" "$opt" || complain "$tool $s: $opt in bash completion"
            has_word "$zsh_c" "$opt" || complain "$tool $s: $opt in zsh completion"
            has_word "$fish_c" "$opt" || has_word "$fish_c" "-l $name" || complain "$tool $s: $opt in fish completion"
        done
    done
done
# Every page formats without a troff warning (lines too long to break or adjust, bad
# requests), as man --warnings would show them.
for man in "$DSEC_SRC"/man/*.1; do
    warnings=$(groff -man -Tutf8 -ww -rLL=78n -z "$man" 2>&1)
    [ -z "$warnings" ] || complain "$(basename "$man"): troff warnings: $warnings"
done
[ "$checked" -gt 5 ] || fail "checked only $checked options: is the help parser broken?"
[ "$problems" = 0 ] || fail "$problems documentation gaps"
echo "checked $checked options"
