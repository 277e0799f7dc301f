#!/bin/bash
# The library never reaches up: no file under lib/ includes the CLI layer (CLI11) except
# lib/dsec/cli itself, and nothing under lib/ includes a tool's files.
set -euo pipefail
src=${DSEC_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
bad=$(grep -rlE '#include "(dsec/cli/|CLI/)' "$src/lib" | grep -v "^$src/lib/dsec/cli/" || true)
[ -z "$bad" ] || { echo "FAIL: the library includes the CLI layer: $bad" >&2; exit 1; }
bad=$(grep -rlE '#include "(\.\./)*tools/|#include "commands.h"' "$src/lib" || true)
[ -z "$bad" ] || { echo "FAIL: the library includes a tool's files: $bad" >&2; exit 1; }
echo ok
