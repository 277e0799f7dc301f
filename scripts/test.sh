#!/bin/sh
# Install what is missing, build, and run every test (unit and integration, as root).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${DSEC_BUILD_DIR:-$src/build}
"$src/scripts/install-deps.sh"
"$src/scripts/build.sh"
cd "$build"
# Two at a time: the Debian test mostly waits; benchmarks run alone (RUN_SERIAL).
ctest --output-on-failure --timeout 300 -j 2 "$@"
