"""Many sandboxes at once: one pipeline of the dsec programs, not one process per call.

    dsec-layer ls LAYERS | dsec-mount --count N | dsec-run create -P P   (create_many)
    sandbox records | dsec-run exec -P P --json -- CMD                  (exec_many)
"""

import asyncio
import json
import os

from ._proc import DsecError, binary, check, parse_records
from .sandbox import Result, Sandbox, argv_of, create_args, exec_args


async def _pipeline(commands, stdin_data=None):
    """Runs `commands` (lists of argv) as a shell pipeline would; returns the last one's
    records. Any program's error record, or a failed exit, raises DsecError."""
    procs = []
    prev_read = None
    for i, argv in enumerate(commands):
        last = i == len(commands) - 1
        read_fd, write_fd = (None, None) if last else os.pipe()
        if i == 0:
            stdin = asyncio.subprocess.PIPE if stdin_data is not None else asyncio.subprocess.DEVNULL
        else:
            stdin = prev_read
        p = await asyncio.create_subprocess_exec(
            binary(argv[0]), *argv[1:], stdin=stdin,
            stdout=asyncio.subprocess.PIPE if last else write_fd, stderr=asyncio.subprocess.PIPE)
        if prev_read is not None:
            os.close(prev_read)
        if write_fd is not None:
            os.close(write_fd)
        prev_read = read_fd
        procs.append(p)
    first, last = procs[0], procs[-1]
    if stdin_data is not None:
        first.stdin.write(stdin_data)
        await first.stdin.drain()
        first.stdin.close()
    # Every stderr read at once with the output, so that no program blocks on a full pipe.
    out, *errs = await asyncio.gather(last.stdout.read(), *(p.stderr.read() for p in procs))
    codes = [await p.wait() for p in procs]
    records = parse_records(out.decode(errors="replace"))
    # Error records travel down the pipeline: the last program's output holds them all.
    for argv, code, err in zip(commands, codes, errs):
        check(records, code, err.decode(errors="replace"), argv[0])
    return records


async def create_many(count, layers, parallel=8, memory=None, cpus=None, ttl=None, policy=None, **options):
    """Creates `count` sandboxes from the same layer stack through one pipeline
    (dsec-layer ls | dsec-mount --count | dsec-run create -P) and returns them."""
    create = ["dsec-run", "create", "-P", str(parallel), *create_args(None, memory, cpus, ttl, policy, **options)]
    records = await _pipeline([["dsec-layer", "ls", *layers], ["dsec-mount", "--count", str(count)], create])
    return [Sandbox(r) for r in records if r.get("type") == "sandbox"]


async def exec_many(sandboxes, cmd, parallel=16, timeout=None, no_output_timeout=None, output_limit=None):
    """Runs cmd in every sandbox through one `dsec-run exec -P` fed their records; returns
    one Result per sandbox, in the order given."""
    feed = "".join(json.dumps(sb.record) + "\n" for sb in sandboxes).encode()
    argv = ["dsec-run", "exec", "-P", str(parallel), "--json",
            *exec_args(timeout, no_output_timeout, output_limit), "--", *argv_of(cmd)]
    records = await _pipeline([argv], stdin_data=feed)
    by_id = {r["id"]: Result.from_record(r) for r in records if r.get("type") == "result"}
    missing = [sb.id for sb in sandboxes if sb.id not in by_id]
    if missing:
        raise DsecError({"code": "failed", "tool": "dsec-run", "message": f"no result for {', '.join(missing)}"})
    return [by_id[sb.id] for sb in sandboxes]


async def destroy_many(sandboxes, parallel=8):
    """Destroys every sandbox through one `dsec-run destroy -P` fed their records."""
    feed = "".join(json.dumps(sb.record) + "\n" for sb in sandboxes).encode()
    await _pipeline([["dsec-run", "destroy", "-P", str(parallel)]], stdin_data=feed)
