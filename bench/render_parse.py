"""Render + parse cost of the message contract for a 50-turn history.

    python bench/render_parse.py [--turns 50] [--repeat 2000]

Prints median and p95 per call of render_messages, parse_reply and both
together, and compares them with a baseline measured in the same run: a plain
``json.dumps`` of the same history (the least any serialisation costs).
Target: render + parse <= 1 ms median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from aw_lookahead.prompts import parse_reply, render_messages
from aw_lookahead.trajectory import Trajectory, Turn


def _history(turns: int) -> Trajectory:
    return Trajectory(
        domain="terminal",
        task="Refactor the project and keep the tests green",
        turns=[
            Turn(
                action=[{"keystrokes": f"grep -rn 'def f{i}' src/ | head\n", "duration": 1.0}],
                observation=f"$ grep -rn 'def f{i}' src/ | head\n"
                + "\n".join(f"src/mod{i}.py:{j}: def f{i}_{j}(x): return x" for j in range(8)),
            )
            for i in range(turns)
        ],
    )


def _timeit(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=2000)
    args = ap.parse_args()
    traj = _history(args.turns)
    action = [{"keystrokes": "pytest -q\n", "duration": 30}]
    reply = (
        "<think>" + "The tests import f3 and f7; both exist. " * 40 + "</think>\n"
        "<predicted_observation>\n"
        + "....................  [100%]\n20 passed in 0.41s" * 3
        + "\n</predicted_observation>"
    )
    dump = traj.model_dump(mode="json")
    rows = [
        ("baseline json.dumps(history)", lambda: json.dumps(dump)),
        ("render_messages", lambda: render_messages(traj, action)),
        ("parse_reply", lambda: parse_reply(reply)),
        ("render + parse", lambda: (render_messages(traj, action), parse_reply(reply))),
    ]
    chars = sum(len(m["content"]) for m in render_messages(traj, action))
    print(f"history: {args.turns} turns, {chars} characters rendered; {args.repeat} calls each")
    print(f"{'what':32} {'median ms':>10} {'p95 ms':>10} {'x baseline':>11}")
    base = None
    for name, fn in rows:
        med, p95 = _timeit(fn, args.repeat)
        base = base or med
        print(f"{name:32} {med:10.4f} {p95:10.4f} {med / base:11.2f}")
    med, _ = _timeit(rows[-1][1], args.repeat)
    print(f"target render+parse <= 1 ms median: {'met' if med <= 1.0 else 'MISSED'} ({med:.4f} ms)")


if __name__ == "__main__":
    main()
