"""Grounded replay: what looking at the sandbox catches on recorded steps, and what it costs.

    python bench/grounded_replay.py --data runs/embedded-data/terminal/test.jsonl \\
        [--limit 200] [--json]

Each recorded terminal trajectory (the data generator's, ``aw-lookahead data
terminal``; its ``test`` split holds families no adapter trained on) is replayed
step by step in a fresh real sandbox seeded with the task's files (rebuilt from
the trajectory's seed and index). Before each step runs, the engine's
environment (``LocalEnvironment`` following the sandbox) looks at what the step
needs; then the step runs for real. The truth is the step's real exit status in
the replay (non-zero: it failed).

Reported, overall and per family: failing steps caught by observation (vetoed
with certainty, before any model), good steps vetoed by observation (false
vetoes: the bar is none), and the cost of a look (median, 95th percentile and
worst, milliseconds; the bar is a median of 20 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from aw_lookahead.datagen.terminal import SANDBOX_ENV, build_task
from aw_lookahead.lookahead.environment import LocalEnvironment
from aw_lookahead.lookahead.routing import terminal_command_text
from aw_lookahead.sandbox import TerminalSandbox
from aw_lookahead.trajectory import Trajectory, read_trajectories


async def replay(traj: Trajectory) -> list[dict[str, Any]]:
    """One row per step: whether it failed for real, what looking said, what it cost."""
    rows: list[dict[str, Any]] = []
    family = str(traj.metadata.get("family", "?"))
    name, spec = build_task(int(traj.metadata["seed"]), int(traj.metadata["index"]))
    if name != family:
        raise SystemExit(f"{traj.id}: the generator now builds {name!r}, not {family!r}")
    async with TerminalSandbox(env=SANDBOX_ENV) as sandbox:
        for rel, text in spec.files.items():  # the task's files, as the generator seeded them
            path = sandbox.write_file(rel, text)
            path.chmod(0o755 if rel in spec.executable else 0o644)
        env = LocalEnvironment.following(sandbox, time_budget_s=0.2)
        seen = traj.model_copy(update={"turns": []})
        for turn in traj.turns:
            command = (terminal_command_text(turn.action) or "").rstrip("\n")
            looked = await env.observe(seen, turn.action)
            result = await sandbox.run(command, timeout=10.0)
            failed = result.exit_code != 0 or result.timed_out
            rows.append(
                {
                    "family": family,
                    "command": command,
                    "failed": failed,
                    "observed_veto": looked is not None and looked.missing is not None,
                    "why": looked.explanation() if looked is not None else "",
                    "ms": looked.seconds * 1000 if looked is not None else None,
                }
            )
            seen = seen.with_turn(turn.action, result.output)
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    failing = [r for r in rows if r["failed"]]
    good = [r for r in rows if not r["failed"]]
    costs = sorted(r["ms"] for r in rows if r["ms"] is not None)
    return {
        "steps": len(rows),
        "failing": len(failing),
        "failing_caught_by_observation": sum(r["observed_veto"] for r in failing),
        "good": len(good),
        "good_vetoed_by_observation": sum(r["observed_veto"] for r in good),
        "look_ms_median": round(statistics.median(costs), 3) if costs else None,
        "look_ms_p95": round(costs[int(0.95 * (len(costs) - 1))], 3) if costs else None,
        "look_ms_max": round(costs[-1], 3) if costs else None,
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    trajectories = [t for path in args.data for t in read_trajectories(path)]
    if args.limit:
        trajectories = trajectories[: args.limit]
    rows: list[dict[str, Any]] = []
    for i, traj in enumerate(trajectories, 1):
        rows.extend(await replay(traj))
        if not args.json and i % 20 == 0:
            print(f"  replayed {i}/{len(trajectories)} trajectories", flush=True)
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_family[row["family"]].append(row)
    return {
        "trajectories": len(trajectories),
        **summarize(rows),
        "per_family": {f: summarize(r) for f, r in sorted(by_family.items())},
        "false_vetoes": [
            {"command": r["command"], "why": r["why"]}
            for r in rows
            if r["observed_veto"] and not r["failed"]
        ],
        "caught": [r["command"] for r in rows if r["observed_veto"] and r["failed"]][:40],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, action="append", required=True)
    p.add_argument("--limit", type=int, default=0, help="first N trajectories (0: all)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    result = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(result))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"grounded replay: {result['trajectories']} recorded trajectories")
    for col in ("family", "failing caught", "good vetoed", "look ms median / p95 / max"):
        table.add_column(col)
    for name, s in [("all", result), *result["per_family"].items()]:
        table.add_row(
            name,
            f"{s['failing_caught_by_observation']} of {s['failing']}",
            f"{s['good_vetoed_by_observation']} of {s['good']}",
            f"{s['look_ms_median']} / {s['look_ms_p95']} / {s['look_ms_max']}",
        )
    Console().print(table)
    for fv in result["false_vetoes"]:
        print(f"false veto: {fv['command']!r}: {fv['why']}")


if __name__ == "__main__":
    main()
