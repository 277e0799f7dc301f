#!/bin/bash
# The library's areas include downwards only (docs/ARCHITECTURE.md): each area of
# lib/dsec has a level, and a file may include its own area and areas of lower levels,
# never its level's others or higher ones. No file under lib/ includes the CLI layer
# (CLI11) except lib/dsec/cli itself, and nothing under lib/ includes a tool's files.
set -euo pipefail
src=${DSEC_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
declare -A level=(
    [sys]=0
    [json]=1 [cgroup]=1 [layer]=1
    [cli]=2 [bench]=2 [mount]=2 [copy]=2
    [ns]=3 [net]=3
    [guard]=4
    [sandbox]=5
    [snapshot]=6 [reclaim]=6
)
problems=0
for dir in "$src"/lib/dsec/*/; do
    area=$(basename "$dir")
    [ -n "${level[$area]:-}" ] || { echo "FAIL: lib/dsec/$area has no level in this test and docs/ARCHITECTURE.md" >&2; problems=$((problems + 1)); continue; }
    while IFS=: read -r file other; do
        [ "$other" = "$area" ] && continue
        if [ -z "${level[$other]:-}" ] || [ "${level[$other]}" -ge "${level[$area]}" ]; then
            echo "FAIL: ${file#"$src"/} ($area, level ${level[$area]}) includes dsec/$other (level ${level[$other]:-?})" >&2
            problems=$((problems + 1))
        fi
    done < <(grep -roE '#include "dsec/[a-z_]+/' "$dir" | sed -E 's|#include "dsec/([a-z_]+)/|\1|' | sort -u)
done
[ "$problems" = 0 ] || exit 1
bad=$(grep -rlE '#include "(dsec/cli/|CLI/)' "$src/lib" | grep -v "^$src/lib/dsec/cli/" || true)
[ -z "$bad" ] || { echo "FAIL: the library includes the CLI layer: $bad" >&2; exit 1; }
bad=$(grep -rlE '#include "(\.\./)*tools/|#include "commands.h"' "$src/lib" || true)
[ -z "$bad" ] || { echo "FAIL: the library includes a tool's files: $bad" >&2; exit 1; }
echo ok
