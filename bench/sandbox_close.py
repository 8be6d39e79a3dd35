"""How long TerminalSandbox.close() takes when children escaped the shell's process tree.

For each way out (``setsid`` holding the shell's output pipe, ``nohup`` in a
subshell, a double fork, ``setsid`` with its output closed) a fresh sandbox
starts the escapee, then ``close()`` is timed and ``/proc`` is scanned for
survivors. Target: close() <= 2 s and no survivor.

    .venv/bin/python bench/sandbox_close.py [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path

from aw_lookahead.sandbox import TerminalSandbox

ESCAPES = {
    "setsid": "(setsid bash -c 'sleep 300; : {m}' &)",
    "nohup": "(nohup bash -c 'sleep 300; : {m}' &)",
    "double-fork": "( ( bash -c 'sleep 300; : {m}' & ) & )",
    "setsid-quiet": "(setsid bash -c 'sleep 300; : {m}' >/dev/null 2>&1 </dev/null &)",
}


def survivors(marker: str) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                count += 1
        except OSError:
            continue
    return count


async def one(command: str, marker: str) -> tuple[float, int]:
    sb = await TerminalSandbox().start()
    await sb.run(command.format(m=marker))
    started = time.perf_counter()
    await sb.close()
    elapsed = time.perf_counter() - started
    await asyncio.sleep(0.2)  # let the kernel finish tearing the killed processes down
    return elapsed, survivors(marker)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    for name, command in ESCAPES.items():
        times: list[float] = []
        left = 0
        for i in range(args.rounds):
            elapsed, alive = await one(command, f"aw-bench-{name}-{os.getpid()}-{i}")
            times.append(elapsed)
            left += alive
        results[name] = {
            "median_s": round(statistics.median(times), 3),
            "max_s": round(max(times), 3),
            "survivors": left,
        }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, row in results.items():
        print(
            f"{name:13s} close median {row['median_s']:.3f} s  max {row['max_s']:.3f} s  "
            f"survivors {row['survivors']:.0f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
