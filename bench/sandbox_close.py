"""How long TerminalSandbox.start() and close() take when children escaped the process tree.

For each way out (``setsid`` holding the shell's output pipe, ``nohup`` in a
subshell, a double fork, ``setsid`` with its output closed, and two that also
drop the session marker: ``env -u AW_SANDBOX_SESSION`` and ``env -i``) a fresh
sandbox starts the escapee, then ``close()`` is timed and ``/proc`` is
scanned for survivors. Target: close() <= 2 s and no survivor; the last two
survive where the sandbox has no cgroup (``cleanup`` is printed). ``start()``
is timed on every round too (the cost of setting the session up).

    .venv/bin/python bench/sandbox_close.py [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import time
from pathlib import Path

from aw_lookahead.sandbox import TerminalSandbox

ESCAPES = {
    "setsid": "(setsid bash -c 'sleep 300; : {m}' &)",
    "nohup": "(nohup bash -c 'sleep 300; : {m}' &)",
    "double-fork": "( ( bash -c 'sleep 300; : {m}' & ) & )",
    "setsid-quiet": "(setsid bash -c 'sleep 300; : {m}' >/dev/null 2>&1 </dev/null &)",
    "env-u-setsid": "(env -u AW_SANDBOX_SESSION setsid bash -c 'sleep 300; : {m}' &)",
    "env-i-setsid": "(setsid env -i bash -c 'sleep 300; : {m}' &)",
}


def survivors(marker: str, *, kill: bool = False) -> int:
    """How many live processes carry ``marker`` in their command line (``kill``: SIGKILL them)."""
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                count += 1
                if kill:
                    os.kill(int(entry.name), signal.SIGKILL)
        except OSError:
            continue
    return count


async def one(command: str, marker: str) -> tuple[float, float, int, str]:
    """(start s, close s, survivors, cleanup) of one sandbox whose command escapes."""
    started = time.perf_counter()
    sb = await TerminalSandbox().start()
    start_s = time.perf_counter() - started
    await sb.run(command.format(m=marker))
    started = time.perf_counter()
    await sb.close()
    elapsed = time.perf_counter() - started
    await asyncio.sleep(0.2)  # let the kernel finish tearing the killed processes down
    left = survivors(marker, kill=True)  # counted, then killed: no sleepers left behind
    return start_s, elapsed, left, str(getattr(sb, "cleanup", "marker"))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, dict[str, float | str]] = {}
    starts: list[float] = []
    for name, command in ESCAPES.items():
        times: list[float] = []
        left = 0
        cleanup = ""
        for i in range(args.rounds):
            start_s, elapsed, alive, cleanup = await one(
                command, f"aw-bench-{name}-{os.getpid()}-{i}"
            )
            starts.append(start_s)
            times.append(elapsed)
            left += alive
        results[name] = {
            "median_s": round(statistics.median(times), 3),
            "max_s": round(max(times), 3),
            "survivors": left,
            "cleanup": cleanup,
        }
    results["start"] = {
        "median_s": round(statistics.median(starts), 4),
        "max_s": round(max(starts), 4),
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    start = results.pop("start")
    print(f"start()       median {start['median_s']:.4f} s  max {start['max_s']:.4f} s")
    for name, row in results.items():
        print(
            f"{name:13s} close median {row['median_s']:.3f} s  max {row['max_s']:.3f} s  "
            f"survivors {row['survivors']}  cleanup {row['cleanup']}"
        )


if __name__ == "__main__":
    asyncio.run(main())
