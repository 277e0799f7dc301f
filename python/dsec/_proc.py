"""Running the dsec binaries and reading their JSON Lines records."""

import json
import os
import shutil
import subprocess


class DsecError(Exception):
    """A dsec program failed. `record` is its error record (code, message, op, path,
    errno, errno_name, id, context, field, tool), or one made up from its exit status
    and stderr when it wrote none."""

    def __init__(self, record):
        self.record = dict(record)
        self.code = self.record.get("code", "failed")
        super().__init__(f"{self.record.get('tool', 'dsec')}: {self.record.get('message', '')}"
                         f" ({self.code})")


def binary(name):
    """Path of dsec program `name`: $DSEC_BIN/name when set, else found on PATH."""
    where = os.environ.get("DSEC_BIN")
    if where:
        return os.path.join(where, name)
    found = shutil.which(name)
    if not found:
        raise DsecError({"code": "not_found", "message": f"{name} is not on PATH (or set DSEC_BIN)",
                         "tool": name})
    return found


def parse_records(text):
    """The records in `text` (one JSON object per line; other lines skipped)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def check(records, returncode, stderr, tool, passthrough=False):
    """Raises DsecError for the first error record, or for a failed exit without one
    (unless `passthrough`: the exit status is a command's, as with exec)."""
    for r in records:
        if r.get("type") == "error":
            raise DsecError(r)
    if returncode != 0 and not passthrough:
        raise DsecError({"code": "failed", "tool": tool,
                         "message": (stderr or "").strip() or f"exit status {returncode}"})
    return records


def run(tool, args, stdin=None, passthrough=False):
    """Runs `tool args...`, feeding `stdin` (bytes or str), and returns its records."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    p = subprocess.run([binary(tool), *args], input=data,
                       stdin=None if data is not None else subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    records = parse_records(p.stdout.decode(errors="replace"))
    check(records, p.returncode, p.stderr.decode(errors="replace"), tool, passthrough)
    return records


def one(records, kind):
    """The first record of type `kind`."""
    for r in records:
        if r.get("type") == kind:
            return r
    raise DsecError({"code": "io", "message": f"no {kind} record in the output", "tool": "dsec"})
