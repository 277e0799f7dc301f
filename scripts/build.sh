#!/bin/sh
# Configure and build dsec into ./build (or $DSEC_BUILD_DIR).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${DSEC_BUILD_DIR:-$src/build}
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)"
