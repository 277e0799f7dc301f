#!/bin/bash
# Completions complete values, as a user at a shell sees them: layer names for --layers
# (a comma-separated list), for dsec-layer ls and rm; sandbox ids and nothing else for
# exec, destroy and the like; exec keys for logs and wait; ID: and host paths for cp (in
# fish too); --run on the line is honoured (bash). Every short option of every --help is
# in the bash, zsh and fish completions; zsh and fish parse every file.
. "$(dirname "$0")/lib.sh"

command -v zsh > /dev/null && command -v fish > /dev/null || fail "zsh and fish are needed (scripts/install-deps.sh)"
C="$DSEC_SRC/completions"
make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-layer tag base tools > /dev/null
dsec-layer tag base py3 > /dev/null
# Completion reads only the run directory's listing: sandboxes (and an exec) by their
# directories, as dsec-run leaves them.
mkdir -p "$DSEC_RUN/sandboxes/box1" "$DSEC_RUN/sandboxes/box2/execs/0a1b2c3d" "$T/run2/sandboxes/other"
mkdir -p "$T/cwd/hostdir" && touch "$T/cwd/hostfile" "$T/cwd/box-file"
cd "$T/cwd"

# What bash offers at the end of a line: the line split as bash splits it (blanks, and
# the colon of COMP_WORDBREAKS), the tool's completion function called as complete -F does.
cat > "$T/bash-complete" <<'EOF'
. "$1"
COMP_LINE=$2; COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<<"$(printf '%s' "$COMP_LINE" | sed 's/:/ : /g')"
[[ $COMP_LINE == *[[:space:]] || $COMP_LINE == *: ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
fn=$(complete -p "${COMP_WORDS[0]}" | sed -E 's/.*-F ([^ ]+).*/\1/')
"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
[ ${#COMPREPLY[@]} = 0 ] || printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
EOF
bash_offers() {  # LINE: prints the sorted completions, space-separated
    local tool=${1%% *}
    bash --norc --noprofile "$T/bash-complete" "$C/bash/$tool" "$1" 2>/dev/null
}
fish_offers() {
    local tool=${1%% *}
    fish --no-config -c "source $C/fish/$tool.fish; complete -C '$1'" | cut -f1 | sort | tr '\n' ' '
}
expect() {  # SHELL LINE WANT
    local got
    got=$("$1_offers" "$2")
    [ "$got" = "$3" ] || fail "$1: \"$2\" offers \"$got\", not \"$3\""
}

# bash's compgen -f marks no directory; fish adds the slash.
for sh in bash fish; do
    slash=$([ $sh = fish ] && echo / || true)
    expect $sh "dsec-run create --layers " "base py3 tools "
    expect $sh "dsec-run create --layers base,t" "base,tools "
    expect $sh "dsec-run ls --layer p" "py3 "
    expect $sh "dsec-layer rm " "base py3 tools "
    expect $sh "dsec-layer ls t" "tools "
    # Ids only: no file of the working directory mixed in.
    expect $sh "dsec-run exec " "box1 box2 "
    expect $sh "dsec-run destroy b" "box1 box2 "
    expect $sh "dsec-run logs " "box1 box2 "
    expect $sh "dsec-run logs box2 " "0a1b2c3d "
    expect $sh "dsec-run wait box2 " "0a1b2c3d "
    # cp: ID: or a host path; after ID: nothing from the host.
    expect $sh "dsec-run cp bo" "box-file box1: box2: "
    expect $sh "dsec-run cp host" "hostdir$slash hostfile "
    expect $sh "dsec-run cp box1:/etc/x host" "hostdir$slash hostfile "
    expect $sh "dsec-run cp box1:" ""
done
# --run on the line wins over the environment.
expect bash "dsec-run --run $T/run2 exec " "other "
for flag in -i -t -d -e -w -u -P; do
    [[ " $(bash_offers "dsec-run exec -") " == *" $flag "* ]] || fail "bash: exec does not offer $flag"
done

# Every short option of every subcommand's --help, in each shell's file.
short_options() {
    awk '/^Options:/{on=1; next} /^[A-Z][a-z]*:/{on=0} on && /^ +-[A-Za-z],/{print substr($1, 1, 2)}' | grep -vx -- -h || true
}
subcommands() {
    awk '/^Subcommands:/{on=1; next} /^[A-Z][a-z]*:/{on=0} on && /^  [a-z]/{print $1}'
}
problems=0
checked=0
for tool in dsec-layer dsec-mount dsec-run dsec-guard dsec-reclaim dsec-bench; do
    for s in "" $("$tool" --help | subcommands); do
        # shellcheck disable=SC2086
        for opt in $("$tool" $s --help | short_options); do
            checked=$((checked + 1))
            grep -qE -- "(^|[^a-zA-Z0-9-])$opt([^a-zA-Z0-9-]|\$)" "$C/bash/$tool" || { echo "bash: $tool $s $opt" >&2; problems=$((problems + 1)); }
            grep -qE -- "\{$opt,|\($opt |'$opt\[|$opt\[" "$C/zsh/_$tool" || { echo "zsh: $tool $s $opt" >&2; problems=$((problems + 1)); }
            grep -qE -- "-s ${opt#-}( |\$)" "$C/fish/$tool.fish" || { echo "fish: $tool $s $opt" >&2; problems=$((problems + 1)); }
        done
    done
done
[ "$checked" -gt 10 ] || fail "checked only $checked short options: is the help parser broken?"
[ "$problems" = 0 ] || fail "$problems short options missing from completions"

# Every file parses; zsh finds each through #compdef.
for f in "$C"/bash/*; do bash -n "$f" || fail "bash cannot parse $f"; done
for f in "$C"/fish/*.fish; do fish --no-config -n "$f" || fail "fish cannot parse $f"; done
for f in "$C"/zsh/_*; do zsh -n "$f" || fail "zsh cannot parse $f"; done
zsh -f -c "fpath=($C/zsh \$fpath); autoload -Uz compinit; compinit -u -d $T/zcompdump;
    for t in dsec-layer dsec-mount dsec-run dsec-guard dsec-reclaim dsec-bench; do
        [[ \${_comps[\$t]} == _\$t ]] || { print -u2 \"zsh: no completion for \$t\"; exit 1; }
    done" || fail "zsh does not register the completions"
echo "ok ($checked short options)"
