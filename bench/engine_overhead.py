"""Engine overhead per step: Lookahead.select over an instant in-process world model.

For each history length (default 50 and 500 turns, in one run, steps
interleaved so every length sees the same machine load): a terminal
history whose last turn is new at every step (an agent's history grows by one
turn a step: the earlier turns are the same objects, the newest one is not),
K=4 fresh candidates per step (no cache hits), the default RuleJudge. The
newest turn and the candidates are spelled apart per length as well as per
step: the parse caches keyed on an action's text are process-wide, so a length
that re-used the round's strings would be served by the one measured before it
(the first length in the loop read ~0.15 ms slower than the others). The
baseline, measured in the same run, is the world model alone
(``predict_many`` on the same inputs); overhead = step time - baseline.
Target: median overhead <= 1 ms at every length, so the cost stays flat as
the history grows. Besides wall time the bench reports the thread's CPU
time per step: on a shared machine whose load exceeds its cores, wall time
also counts the neighbours' time slices.

    .venv/bin/python bench/engine_overhead.py [--steps 300] [--turns 50 500] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from typing import Any

from aw_lookahead.lookahead import Lookahead
from aw_lookahead.trajectory import Action, Trajectory, action_text
from aw_lookahead.worldmodel import FunctionWorldModel

TARGET_MS = 1.0


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


async def main(steps: int, k: int, turns: list[int]) -> list[dict[str, Any]]:
    """Steps at each history length, interleaved, so every length sees the same machine load."""
    wm = FunctionWorldModel(instant, model_id="instant")
    older = {n: history(max(n - 1, 0)) for n in turns}
    engines = {n: Lookahead(wm) for n in turns}
    base: dict[int, list[float]] = {n: [] for n in turns}
    step: dict[int, list[float]] = {n: [] for n in turns}
    cpu_base: dict[int, list[float]] = {n: [] for n in turns}
    cpu_step: dict[int, list[float]] = {n: [] for n in turns}
    for s in range(steps + 20):
        for n in turns:
            traj = older[n].with_turn(
                [{"keystrokes": f"make test_{s}_{n}\n", "duration": 1}], f"ok {s} {n}"
            )
            cands: list[Action] = [f"grep -n pattern_{s}_{n}_{c} src/" for c in range(k)]
            c0, t0 = time.thread_time(), time.perf_counter()
            await wm.predict_many(traj, cands)
            c1, t1 = time.thread_time(), time.perf_counter()
            await engines[n].select(traj, cands)
            c2, t2 = time.thread_time(), time.perf_counter()
            if s >= 20:  # warm-up
                base[n].append(t1 - t0)
                step[n].append(t2 - t1)
                cpu_base[n].append(c1 - c0)
                cpu_step[n].append(c2 - c1)
    results = []
    for n in turns:
        over = [b - a for a, b in zip(base[n], step[n], strict=True)]
        cpu_over = [b - a for a, b in zip(cpu_base[n], cpu_step[n], strict=True)]
        results.append(
            {
                "history_turns": n,
                "steps": steps,
                "k": k,
                "baseline_median_ms": statistics.median(base[n]) * 1e3,
                "step_median_ms": statistics.median(step[n]) * 1e3,
                "overhead_median_ms": statistics.median(over) * 1e3,
                "overhead_p95_ms": pct(over, 0.95) * 1e3,
                "cpu_overhead_median_ms": statistics.median(cpu_over) * 1e3,
                "target_median_ms": TARGET_MS,
            }
        )
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("-k", type=int, default=4)
    parser.add_argument("--turns", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = asyncio.run(main(args.steps, args.k, args.turns))
    if args.json:
        print(json.dumps(results))
    else:
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for out in results:
            print(
                f"{out['history_turns']:>4} turns: overhead median "
                f"{out['overhead_median_ms']:.3f} ms (p95 {out['overhead_p95_ms']:.3f}; "
                f"CPU time {out['cpu_overhead_median_ms']:.3f}), step "
                f"{out['step_median_ms']:.3f} ms, baseline {out['baseline_median_ms']:.3f} ms"
            )
        ok = all(out["overhead_median_ms"] <= TARGET_MS for out in results)
        print("target met" if ok else "TARGET MISSED")
