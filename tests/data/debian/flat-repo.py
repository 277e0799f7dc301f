"""Makes DIR a flat apt repository of the .deb files in it: Packages and Release.

    python3 - DIR < flat-repo.py

apt reads it with `deb [trusted=yes] URL ./` (no signature; the Release file carries
the index's SHA256, which apt checks). 48-run-debian.sh runs this with the sandbox's own
python and serves DIR on the sandbox's loopback, so that `apt-get update` and
`apt-get install` go through apt's http method, which drops to the _apt user, with no
network beyond the sandbox.
"""
import email.utils
import hashlib
import os
import subprocess
import sys


def stanza(directory, deb):
    path = os.path.join(directory, deb)
    control = subprocess.run(["dpkg-deb", "-f", path], capture_output=True, text=True,
                             check=True).stdout.rstrip("\n")
    data = open(path, "rb").read()
    return (f"{control}\nFilename: ./{deb}\nSize: {len(data)}\n"
            f"SHA256: {hashlib.sha256(data).hexdigest()}\n")


def main():
    directory = sys.argv[1]
    debs = sorted(f for f in os.listdir(directory) if f.endswith(".deb"))
    packages = "\n".join(stanza(directory, deb) for deb in debs).encode()
    with open(os.path.join(directory, "Packages"), "wb") as f:
        f.write(packages)
    release = (f"Date: {email.utils.formatdate(usegmt=True)}\nSHA256:\n"
               f" {hashlib.sha256(packages).hexdigest()} {len(packages)} Packages\n")
    with open(os.path.join(directory, "Release"), "w") as f:
        f.write(release)


main()
