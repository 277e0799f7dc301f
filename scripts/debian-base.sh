#!/bin/bash
# A real Debian base for tests: `debootstrap --variant=minbase` of a suite with extra
# packages, packed as a zstd tarball that `dsec-layer import` takes, and cached, so that
# only the first run downloads. Prints the tarball's path on stdout; says on stderr
# whether it came from the cache and how long debootstrap took.
#
#   scripts/debian-base.sh [--suite bookworm] [--mirror URL] [--cache DIR] PKG...
#
# The cache (--cache, else $DSEC_TEST_CACHE, else /var/cache/dsec-test) holds one tarball
# per suite, mirror, architecture and package list (the name carries a digest of them),
# written whole or not at all; concurrent runs wait for each other on a lock. A cold cache
# needs the mirror; a mirror out of reach is an error (exit 1), never a silent skip.
set -euo pipefail

suite=bookworm
mirror=${DSEC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${DSEC_TEST_CACHE:-/var/cache/dsec-test}
usage() { echo "usage: $0 [--suite S] [--mirror URL] [--cache DIR] PKG..." >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
        --suite) suite=${2:?}; shift 2 ;;
        --mirror) mirror=${2:?}; shift 2 ;;
        --cache) cache=${2:?}; shift 2 ;;
        -*) usage ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || usage
command -v debootstrap > /dev/null || { echo "debian-base: no debootstrap (scripts/install-deps.sh installs it)" >&2; exit 1; }

# Bump `layout` whenever what is done to the tree below changes, so old tarballs go unused.
arch=$(dpkg --print-architecture)
packages=$(printf '%s\n' "$@" | sort -u | paste -sd, -)
key=$(printf 'layout=3 suite=%s arch=%s mirror=%s packages=%s' "$suite" "$arch" "$mirror" "$packages" |
    sha256sum | cut -c1-16)
tarball="$cache/debian-$suite-$arch-minbase-$key.tar.zst"

mkdir -p "$cache"
exec 9> "$cache/.lock"
flock 9
if [ -s "$tarball" ]; then
    echo "debian-base: cached $tarball ($packages)" >&2
    echo "$tarball"
    exit 0
fi

work=$(mktemp -d "$cache/.work.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "debian-base: debootstrap $suite ($packages) from $mirror ..." >&2
start=$(date +%s)
if ! debootstrap --variant=minbase --arch="$arch" --include="$packages" \
        "$suite" "$work/tree" "$mirror" > "$work/debootstrap.log" 2>&1; then
    echo "debian-base: debootstrap of $suite from $mirror failed (is the mirror reachable?); its log ends:" >&2
    tail -n 15 "$work/debootstrap.log" >&2
    exit 1
fi
took=$(($(date +%s) - start))

# What the Debian installer would add and debootstrap leaves to it: /etc/hosts (without
# it "localhost" does not resolve). debootstrap copies the build host's hostname and
# resolver into the tree; neither belongs in a base image.
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$work/tree/etc/hosts"
echo debian > "$work/tree/etc/hostname"
: > "$work/tree/etc/resolv.conf"
# Device nodes are the runtime's to provide (and an import refuses them); keep /dev empty.
find "$work/tree/dev" -mindepth 1 -delete
# No package lists, as in Debian's container images: they go stale, and with them apt
# would try the mirror for a local .deb whose version it lists before it takes the file.
find "$work/tree/var/lib/apt/lists" -maxdepth 1 -type f -delete
# Nor the .debs debootstrap installed from (tens of MB): what `apt-get clean` removes.
find "$work/tree/var/cache/apt" \( -name '*.deb' -o -name '*.bin' \) -type f -delete
# The versions it holds, beside it, for people.
# shellcheck disable=SC2016 # dpkg-query expands these, not the shell
chroot "$work/tree" dpkg-query -W -f '${Package} ${Version}\n' > "$work/packages"
tar --numeric-owner -C "$work/tree" -c . | zstd -q -T0 > "$work/base.tar.zst"
mv "$work/packages" "${tarball%.tar.zst}.packages"
mv "$work/base.tar.zst" "$tarball"
echo "debian-base: debootstrap took ${took}s; cached $tarball ($(du -h "$tarball" | cut -f1))" >&2
echo "$tarball"
