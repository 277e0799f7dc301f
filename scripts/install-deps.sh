#!/bin/sh
# Install the Debian 12 packages dsec needs to build, test and benchmark.
# Idempotent: only missing packages are fetched.
set -eu

build="cmake g++ make lld pkg-config libcli11-dev nlohmann-json3-dev libarchive-dev \
libacl1-dev libzstd-dev libseccomp-dev libbpf-dev libssl-dev doctest-dev erofs-utils"
run="busybox-static jq zstd xz-utils bzip2 gzip attr tar util-linux iproute2 nftables fuse3 libfuse3-dev"
bench="bubblewrap runc gnuplot-nox bpftool clang"
# The sanitizer build and the fuzz targets (scripts/build.sh --sanitize): clang's runtimes.
sanitize="clang libclang-rt-14-dev"
# groff-base: test 01 formats every man page and fails on troff warnings; zsh and fish:
# test 112 parses the completions with them and asks fish what it completes.
test="debootstrap python3 python3-yaml groff-base zsh fish"
# The cluster tests' distributed filesystem and workload manager (their daemons are
# started by the tests themselves, in private namespaces).
cluster="glusterfs-server glusterfs-client slurm-wlm munge"

missing=""
for p in $build $run $bench $sanitize $test $cluster; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
        || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "dsec: installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
