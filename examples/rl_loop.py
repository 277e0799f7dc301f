#!/usr/bin/env python3
"""A toy RL-style loop over dsec: N sandboxes from one layer stack, a few steps of a
persistent shell session in each (the "policy" picks a command, the sandbox's state is
the environment, a command's output is the reward), the best sandbox snapshotted into a
layer, every sandbox destroyed with its command log kept beside the trajectory.

    PATH=build:$PATH python3 examples/rl_loop.py --layers base --count 8 --steps 5 --logs /tmp/logs

Run as root (dsec-run needs it), with python/ on PYTHONPATH or from the source tree.
"""

import argparse
import asyncio
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import dsec  # noqa: E402


def policy(rng, step):
    """The 'agent': a shell command for this step (state carries over between steps)."""
    if step == 0:
        return "mkdir -p /tmp/work && cd /tmp/work && score=0"
    add = rng.randint(0, 9)
    return f"score=$((score + {add})); echo $score > score; cat score"


async def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", default="base", help="layer names, base first, comma-separated")
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--logs", help="keep each sandbox's command log here")
    ap.add_argument("--snapshot-name", default="best-episode")
    args = ap.parse_args()

    # One pipeline creates them all: dsec-layer ls | dsec-mount --count N | dsec-run create.
    boxes = await dsec.create_many(args.count, args.layers.split(","), parallel=8, memory="256M", ttl=600)
    rng = random.Random(0)
    rewards = {}
    try:
        sessions = [sb.session() for sb in boxes]
        for step in range(args.steps):
            # Each step goes to every sandbox at once; a session runs one command at a time.
            results = await asyncio.gather(*(asyncio.to_thread(s.run, policy(rng, step), timeout=10)
                                             for s in sessions))
            for sb, r in zip(boxes, results):
                if r.ok and r.stdout.strip().isdigit():
                    rewards[sb.id] = int(r.stdout)
        best = max(boxes, key=lambda sb: rewards.get(sb.id, -1))
        layer = best.snapshot(name=args.snapshot_name)
        print(json.dumps({"best": best.id, "reward": rewards.get(best.id), "layer": layer["digest"],
                          "log_position": layer["log_position"], "rewards": rewards}))
    finally:
        for sb in boxes:
            sb.destroy(keep_log=args.logs)


if __name__ == "__main__":
    asyncio.run(main())
