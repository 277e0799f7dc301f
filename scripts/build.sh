#!/bin/sh
# Configure and build dsec into ./build (or $DSEC_BUILD_DIR).
# --sanitize: the clang build with ASan + UBSan and the fuzz targets, into ./build-san
# (or $DSEC_SANITIZE_BUILD_DIR; cmake/sanitize.cmake says what it holds).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = "--sanitize" ]; then
    build=${DSEC_SANITIZE_BUILD_DIR:-$src/build-san}
    # -O0 and line tables: readable reports, and half the compile time of -O1 (ASan and
    # UBSan make code generation the larger part of it).
    CC=clang CXX=clang++ cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DDSEC_SANITIZE=ON \
        "-DCMAKE_C_FLAGS_DEBUG=-O0 -gline-tables-only" "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -gline-tables-only" >/dev/null
else
    build=${DSEC_BUILD_DIR:-$src/build}
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j "$(nproc)"
