#!/usr/bin/env python3
"""Regenerates the hostile archives in tests/data/hostile/ (run from anywhere).

Each file is small and attacks one thing an importer must not get wrong; the
integration tests 11-import-hostile.sh and 12-import-limits.sh feed them to
`dsec-layer import`. Output is deterministic (fixed mtimes, gzip without a
timestamp), so regenerating leaves the committed files unchanged. The 2 GiB zstd
bomb takes a while and is remade only when missing or with --all. Needs python3
and the zstd program.
"""
import gzip
import io
import os
import random
import subprocess
import sys
import tarfile

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostile")


def member(name, kind=tarfile.REGTYPE, data=b"", mode=0o644, link="", dev=(0, 0), pax=None):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.mtime = 1700000000
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.linkname = link
    info.devmajor, info.devminor = dev
    if pax:
        info.pax_headers = pax
    if kind == tarfile.REGTYPE:
        info.size = len(data)
    return info, (io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def tar_bytes(members, fmt=tarfile.PAX_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for info, data in members:
            t.addfile(info, data)
    return buf.getvalue()


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def gz(data):
    return gzip.compress(data, compresslevel=9, mtime=0)


def zstd(data):
    return subprocess.run(["zstd", "-q", "-19", "-c"], input=data, check=True, capture_output=True).stdout


def zeros_tar_zst(name, size):
    """A tar holding one `size`-byte file of zeros, zstd-compressed, streamed."""
    header = tarfile.TarInfo("zeros")
    header.size = size
    header.mtime = 1700000000
    hdr = header.tobuf(format=tarfile.GNU_FORMAT)
    proc = subprocess.Popen(["zstd", "-q", "-19", "-c"], stdin=subprocess.PIPE,
                            stdout=open(os.path.join(OUT, name), "wb"))
    proc.stdin.write(hdr)
    chunk = bytes(1 << 20)
    for _ in range(size // len(chunk)):
        proc.stdin.write(chunk)
    proc.stdin.write(bytes(2 * 512 * 10))  # end-of-archive blocks, padded to a record
    proc.stdin.close()
    if proc.wait() != 0:
        sys.exit("zstd failed")


def main():
    os.makedirs(OUT, exist_ok=True)
    f = lambda name, data=b"x\n", **kw: member(name, data=data, **kw)
    d = lambda name, mode=0o755, **kw: member(name, tarfile.DIRTYPE, mode=mode, **kw)
    sym = lambda name, target: member(name, tarfile.SYMTYPE, mode=0o777, link=target)
    hard = lambda name, target: member(name, tarfile.LNKTYPE, link=target)

    # Paths that leave the tree.
    write("traversal.tar", tar_bytes([f("ok"), f("../escape")]))
    write("traversal-nested.tar", tar_bytes([d("a"), f("a/../../escape")]))
    write("absolute.tar", tar_bytes([f("/tmp/dsec-hostile-absolute")]))
    # Writing through a symlink: the link itself is fine, the file below it is not.
    write("symlink-escape.tar", tar_bytes([sym("link", "/etc"), f("link/passwd", b"pwned\n")]))
    write("symlink-relative-escape.tar", tar_bytes([sym("up", "../../../../../.."), f("up/tmp/dsec-hostile-rel")]))
    write("dir-then-symlink.tar", tar_bytes([d("d"), f("d/a"), sym("d", "/etc"), f("d/passwd", b"pwned\n")]))
    # Hard links out of the tree, to nothing, and through a symlink.
    write("hardlink-escape.tar", tar_bytes([hard("h", "../../../../etc/passwd")]))
    write("hardlink-absolute.tar", tar_bytes([hard("h", "/etc/passwd")]))
    write("hardlink-missing.tar", tar_bytes([hard("h", "nothing-here")]))
    write("hardlink-through-symlink.tar", tar_bytes([sym("l", "/etc"), hard("h", "l/passwd")]))
    # Device nodes (a 0/0 character device is a whiteout and is accepted).
    write("device-char.tar", tar_bytes([member("null", tarfile.CHRTYPE, dev=(1, 3))]))
    write("device-block.tar", tar_bytes([member("sda", tarfile.BLKTYPE, dev=(8, 0))]))
    # Set-id programs and attributes that grant privileges: neutralized.
    write("setid.tar", tar_bytes([f("suid", mode=0o4755), f("sgid", mode=0o2755), d("shared", mode=0o2775)]))
    write("xattrs.tar", tar_bytes([
        f("cap", pax={"SCHILY.xattr.security.capability": "\x01\x00\x00\x02"}),
        d("redirect", pax={"SCHILY.xattr.trusted.overlay.redirect": "/etc"}),
        f("plain", pax={"SCHILY.xattr.user.note": "kept"}),
    ]))
    # Names past the kernel's limits.
    write("long-name.tar", tar_bytes([f("n" * 300)]))
    write("long-path.tar", tar_bytes([f("/".join(["p" * 200] * 22))]))
    # Archives that end early, and one that is not an archive.
    noise = random.Random(7).randbytes(40000)
    good = tar_bytes([f("a", noise[:20000]), f("b", noise[20000:])], fmt=tarfile.USTAR_FORMAT)
    write("truncated.tar", good[:15000])
    write("truncated.tar.gz", gz(good)[:25000])
    write("not-a-tar.bin", b"this is not an archive\n" * 10)
    # Decompression bombs: 100 MiB of zeros in a tiny gzip (caught by --max-size), and
    # 2 GiB in a tiny zstd (caught by the expansion ratio).
    bomb = io.BytesIO()
    with tarfile.open(fileobj=bomb, mode="w", format=tarfile.USTAR_FORMAT) as t:
        info = tarfile.TarInfo("zeros")
        info.size = 100 << 20
        info.mtime = 1700000000
        t.addfile(info, io.BytesIO(bytes(info.size)))
    write("bomb-100M.tar.gz", gz(bomb.getvalue()))
    if not os.path.exists(os.path.join(OUT, "bomb-2G.tar.zst")) or "--all" in sys.argv:
        zeros_tar_zst("bomb-2G.tar.zst", 2 << 30)  # slow: only with --all
    # More entries than a small --max-entries allows.
    write("many-entries.tar", tar_bytes([f("e%03d" % i, b"") for i in range(50)]))
    # A malformed OCI whiteout.
    write("whiteout-dotdot.tar", tar_bytes([f(".wh..."), f("a/.wh..")]))


if __name__ == "__main__":
    main()
