"""Does the world model read what an earlier ``ls`` showed? ``cat`` of listed and unlisted files.

    python bench/listing_reads.py --base-url URL [--model NAME] [--n 60] [--seed 22] [--json]
    python bench/listing_reads.py --write FILE [--n 60] [--seed 22]   # the trajectories only

Records ``--n`` tasks in real bash sandboxes (``record_tasks``, as the
training data is made): a folder of two to four files, ``ls`` (of it or of a
subfolder), then in random order ``cat`` of one or two files the listing
shows and one or two names of the same shape it does not. Each ``cat`` is
then gated with the history before it by the default engine over the world
model at ``--base-url`` (its calibration, as a user gets it).

Reports, for listed and unlisted files apart: vetoed by prediction, and the
median ``p_failure``; and the AUC of ``p_failure`` (the chance a random
unlisted ``cat`` gets a higher one than a random listed ``cat``; 0.5 is a
model that does not read the listing). ``--write`` saves the trajectories as
JSONL for ``aw-lookahead eval calibrate --data FILE`` or training.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
from typing import Any

from aw_lookahead.datagen.terminal import record_tasks
from aw_lookahead.datagen.terminal.spec import DIRS, TaskSpec, bad, lines_file, ok, words
from aw_lookahead.lookahead import Lookahead
from aw_lookahead.lookahead.types import veto_basis
from aw_lookahead.trajectory import Trajectory
from aw_lookahead.worldmodel import OpenAIWorldModel

EXTS = ("txt", "md", "csv", "log", "conf")
FAMILY = "bench_listing_reads"


def _name(rng: random.Random, word: str) -> str:
    return f"{word}{rng.choice(['', f'_{rng.randint(1, 99)}'])}.{rng.choice(EXTS)}"


def listing_task(rng: random.Random) -> TaskSpec:
    """One task: files, ``ls``, then ``cat`` of listed and unlisted names in random order."""
    pool = words(rng, 7)
    present = [_name(rng, w) for w in pool[: rng.randint(2, 4)]]
    absent = [_name(rng, w) for w in pool[4:6]]
    folder = rng.choice(DIRS) if rng.random() < 0.3 else ""
    prefix = f"{folder}/" if folder else ""
    files = {
        prefix + p: lines_file(f"{w} {rng.randint(1, 99)}" for w in words(rng, rng.randint(1, 4)))
        for p in present
    }
    reads = [ok(f"cat {prefix}{p}") for p in rng.sample(present, min(2, len(present)))]
    reads += [bad(f"cat {prefix}{a}") for a in absent[: rng.randint(1, 2)]]
    rng.shuffle(reads)
    return TaskSpec("Read the notes here.", [ok(f"ls {folder}".strip()), *reads], files)


async def record(n: int, seed: int) -> list[Trajectory]:
    specs = [(FAMILY, listing_task(random.Random(f"{seed}:{i}:{FAMILY}"))) for i in range(n)]
    return await record_tasks(specs, seed=seed)


def _auc(failing: list[float], good: list[float]) -> float | None:
    if not failing or not good:
        return None
    wins = sum((f > g) + 0.5 * (f == g) for f in failing for g in good)
    return wins / (len(failing) * len(good))


async def measure(base_url: str, model: str | None, trajs: list[Trajectory]) -> dict[str, Any]:
    engine = Lookahead(OpenAIWorldModel(model, base_url=base_url))
    rows: list[dict[str, Any]] = []
    for traj in trajs:
        for i, turn in enumerate(traj.turns):
            command = str(turn.action[0]["keystrokes"]).strip()  # type: ignore[index]
            if not command.startswith("cat "):
                continue
            history = traj.model_copy(update={"turns": traj.turns[:i]})
            [decision] = await engine.gate(history, [turn.action])
            rows.append(
                {
                    "command": command,
                    "listed": not turn.metadata.get("mistake"),
                    "vetoed_by": veto_basis(decision),
                    "p_failure": decision.p_failure or 0.0,
                    "predicted": (decision.prediction.observation if decision.prediction else "")[
                        :120
                    ],
                }
            )
    out: dict[str, Any] = {"model": model, "actions": len(rows)}
    for label, listed in (("listed", True), ("unlisted", False)):
        part = [r for r in rows if r["listed"] is listed]
        out[label] = {
            "n": len(part),
            "vetoed_by_prediction": sum(r["vetoed_by"] == "prediction" for r in part),
            "median_p_failure": round(statistics.median(r["p_failure"] for r in part), 3)
            if part
            else None,
        }
    auc = _auc(
        [r["p_failure"] for r in rows if not r["listed"]],
        [r["p_failure"] for r in rows if r["listed"]],
    )
    out["auc"] = None if auc is None else round(auc, 3)
    out["rows"] = rows
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", default=None)
    p.add_argument("--model", default=None)
    p.add_argument("--n", type=int, default=60)
    p.add_argument("--seed", type=int, default=22)
    p.add_argument("--write", default=None, help="save the trajectories as JSONL and stop")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    trajs = asyncio.run(record(args.n, args.seed))
    if args.write:
        with open(args.write, "x", encoding="utf-8") as f:
            f.writelines(t.model_dump_json(exclude_none=True) + "\n" for t in trajs)
        print(f"wrote {len(trajs)} trajectories to {args.write}")
        return 0
    if not args.base_url:
        p.error("--base-url is needed to measure (or --write FILE to save the trajectories)")
    result = asyncio.run(measure(args.base_url, args.model, trajs))
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        for label in ("listed", "unlisted"):
            print(f"{label:<9} {result[label]}")
        print(f"AUC of p_failure (unlisted above listed): {result['auc']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
