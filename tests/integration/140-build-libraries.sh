#!/bin/bash
# What each program loads at start (docs/ARCHITECTURE.md, CMakeLists.txt): dsec-init is
# static; dsec-run is a static PIE where the archives were found (it says so), its
# relative relocations packed where the linker can, its entry the one that maps its
# pages (lib/start/prefault.c); the programs that never call libarchive, libseccomp or
# libbpf do not load them. A program that loaded libarchive would also load libxml2 and
# ICU at every start (about 1.5 ms), as dsec-mount did when the core library was compiled
# in batches and linked by GNU ld.
set -euo pipefail
bin=${DSEC_BIN:-$(cd "$(dirname "$0")/../../build" && pwd)}
needed() { readelf -d "$bin/$1" | sed -nE 's/.*\(NEEDED\).*\[(lib[a-z0-9_+-]+)\.so.*/\1/p' | sort | tr '\n' ' '; }
interp() { readelf -l "$bin/$1" | grep -c 'Requesting program interpreter' || true; }
problems=0
problem() { echo "FAIL: $*" >&2; problems=$((problems + 1)); }

static() { [ "$(needed "$1")" = "" ] && [ "$(interp "$1")" = 0 ]; }

static dsec-init || problem "dsec-init is not static: $(needed dsec-init)"
if grep -qx 'DSEC_RUN_LINKS_STATIC_PIE:INTERNAL=ON' "$bin/CMakeCache.txt"; then
    static dsec-run || problem "dsec-run is not a static PIE: $(needed dsec-run)"
    # Its relative relocations packed (DT_RELR), where the linker can.
    if grep -qx 'DSEC_HAVE_RELR:INTERNAL=1' "$bin/CMakeCache.txt"; then
        readelf -d "$bin/dsec-run" | grep -q '(RELR)' || problem "dsec-run has no DT_RELR"
    fi
    # On x86-64 it starts at dsec_start, which maps its pages before the C library's _start.
    if [ "$(uname -m)" = x86_64 ]; then
        entry=$(readelf -h "$bin/dsec-run" | awk '/Entry point/ {print $4}')
        start=$(nm "$bin/dsec-run" | awk '$3 == "dsec_start" {print "0x" $1}')
        if [ -z "$start" ] || [ $((entry)) != $((start)) ]; then
            problem "dsec-run's entry $entry is not dsec_start (${start:-absent})"
        fi
        # Linked by lld, its start maps the code up to the marker its symbol-ordering file
        # names last: the functions the file lists all lie below it.
        if grep -qx 'DSEC_HAVE_LLD:INTERNAL=1' "$bin/CMakeCache.txt"; then
            order=$(dirname "$0")/../../tools/dsec-run/symbol-order.txt
            layout=$(nm --defined-only "$bin/dsec-run" | awk -v list="$order" -v marker=dsec_hot_text_end '
                BEGIN { while ((getline n < list) > 0) want[n] = 1 }
                $2 ~ /^[tTwW]$/ && ($3 in want) { addr[$3] = $1 }
                END {
                    end = addr[marker]
                    if (end == "") { print "no " marker; exit }
                    for (n in addr) if (addr[n] > end) above++
                    if (above) print above " listed functions lie above " marker
                    if (length(addr) < 500) print "only " length(addr) " listed functions found"
                }')
            [ -z "$layout" ] || problem "dsec-run's layout: $layout"
        fi
    fi
fi
for tool in dsec-mount dsec-layer; do
    for lib in libseccomp libbpf; do
        [[ " $(needed $tool)" != *" $lib "* ]] || problem "$tool loads $lib, which it never calls"
    done
done
[[ " $(needed dsec-mount)" != *" libarchive "* ]] || problem "dsec-mount loads libarchive, which it never calls"
# Linked by lld, the core library compiled in batches: only what the kept code calls.
if grep -qx 'DSEC_HAVE_LLD:INTERNAL=1' "$bin/CMakeCache.txt"; then
    [[ " $(needed dsec-bench)" != *" libseccomp "* ]] || problem "dsec-bench loads libseccomp, which it never calls"
    [[ " $(needed dsec-reclaim)" != *" libseccomp "* ]] || problem "dsec-reclaim loads libseccomp, which it never calls"
fi
# The check reads what it should: a program that calls libarchive is seen to load it.
[[ " $(needed dsec-layer)" == *" libarchive "* ]] || problem "dsec-layer does not load libarchive (is readelf's output read right?)"
[ "$problems" = 0 ]
