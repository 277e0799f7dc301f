#!/bin/sh
# Install what is missing, build, and run every test (unit and integration, as root).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${DSEC_BUILD_DIR:-$src/build}
"$src/scripts/install-deps.sh"
"$src/scripts/build.sh"
cd "$build"
ctest --output-on-failure --timeout 300 "$@"
