"""Engine overhead per step: Lookahead.select over an instant in-process world model.

A 50-turn terminal history, K=4 fresh candidates per step (no cache hits), the
default RuleJudge. The baseline, measured in the same run, is the world model
alone (``predict_many`` on the same inputs); overhead = step time - baseline.
Target: median overhead <= 1 ms.

    .venv/bin/python bench/engine_overhead.py [--steps 300] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from aw_lookahead.lookahead import Lookahead
from aw_lookahead.trajectory import Action, Trajectory, action_text
from aw_lookahead.worldmodel import FunctionWorldModel


def history(turns: int) -> Trajectory:
    traj = Trajectory(domain="terminal", task="fix the failing build")
    for i in range(turns):
        traj = traj.with_turn(
            [{"keystrokes": f"cat src/module_{i}.py\n", "duration": 0.1}],
            "\n".join(f"def f_{i}_{j}(x):\n    return x + {j}" for j in range(6)),
        )
    return traj


def instant(trajectory: Trajectory, action: Action) -> str:
    return f"ran {action_text(action)[:40]}\nexit code 0"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(steps: int, k: int, turns: int) -> dict[str, float]:
    traj = history(turns)
    wm = FunctionWorldModel(instant, model_id="instant")
    lk = Lookahead(wm)
    base: list[float] = []
    step: list[float] = []
    for s in range(steps + 20):
        cands: list[Action] = [f"grep -n pattern_{s}_{c} src/" for c in range(k)]
        t0 = time.perf_counter()
        await wm.predict_many(traj, cands)
        t1 = time.perf_counter()
        await lk.select(traj, cands)
        t2 = time.perf_counter()
        if s >= 20:  # warm-up
            base.append(t1 - t0)
            step.append(t2 - t1)
    over = [b - a for a, b in zip(base, step, strict=True)]
    return {
        "steps": steps,
        "k": k,
        "history_turns": turns,
        "baseline_median_ms": statistics.median(base) * 1e3,
        "step_median_ms": statistics.median(step) * 1e3,
        "overhead_median_ms": statistics.median(over) * 1e3,
        "overhead_p95_ms": pct(over, 0.95) * 1e3,
        "target_median_ms": 1.0,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("-k", type=int, default=4)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = asyncio.run(main(args.steps, args.k, args.turns))
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key:>22}: {value:.3f}" if isinstance(value, float) else f"{key:>22}: {value}")
        ok = out["overhead_median_ms"] <= out["target_median_ms"]
        print("target met" if ok else "TARGET MISSED")
