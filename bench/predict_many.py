"""K candidates per step: one concurrent ``predict_many`` vs K sequential ``predict`` calls.

    python bench/predict_many.py [--base-url URL --model NAME] [--ks 1,2,4] [--repeat 3]

Without --base-url (or AW_LOOKAHEAD_BASE_URL) it starts the embedded CPU
server. Each repetition uses a fresh ~1,500-token history (a nonce in the task),
so the first request of a step pays the prefill and the others can reuse it
from the prefix cache. Prints wall time per step for both ways, their ratio,
the cached prompt tokens the replies reported, and the server's prefix-cache
hit rate over each K's steps (from ``/metrics``, both ways together).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import uuid
from contextlib import ExitStack

from aw_lookahead.endpoint import ENV_BASE_URL, ENV_MODEL
from aw_lookahead.serving.metrics import fetch_metrics
from aw_lookahead.trajectory import Trajectory, Turn
from aw_lookahead.worldmodel import OpenAIWorldModel


def _history() -> Trajectory:
    nonce = uuid.uuid4().hex
    return Trajectory(
        domain="terminal",
        task=f"Audit the logs {nonce}",
        turns=[
            Turn(
                action=[{"keystrokes": f"tail -n 20 app{i}.log\n", "duration": 0.5}],
                observation="\n".join(
                    f"2026-11-29 07:{i:02d}:{j:02d} INFO job {j} ok" for j in range(14)
                ),
            )
            for i in range(8)
        ],
    )


CANDIDATES = [
    "ls -la\n",
    "grep ERROR app3.log\n",
    "wc -l *.log\n",
    "rm app1.log\n",
    "df -h\n",
    "cat app7.log | head\n",
    "du -sh .\n",
    "tail app0.log\n",
]


async def run(
    base_url: str, model: str | None, ks: list[int], repeat: int, max_tokens: int
) -> None:
    async with OpenAIWorldModel(
        model, base_url=base_url, max_tokens=max_tokens, temperature=0.6, timeout=300
    ) as wm:
        await wm.predict(_history(), "echo warm-up")
        print(f"model {wm.model} at {base_url}; max_tokens {max_tokens}; {repeat} steps per cell")
        print(
            f"{'K':>3} {'sequential s':>13} {'concurrent s':>13} {'ratio':>7} "
            f"{'cached/prompt':>14} {'server hit rate':>16}"
        )
        for k in ks:
            acts = [[{"keystrokes": c, "duration": 0.5}] for c in CANDIDATES[:k]]
            seq, conc, cached, prompt = [], [], 0, 0
            before = await fetch_metrics(base_url, model=wm.model)
            for _ in range(repeat):
                traj = _history()
                t = time.perf_counter()
                for a in acts:
                    await wm.predict(traj, a)
                seq.append(time.perf_counter() - t)
                traj = _history()
                t = time.perf_counter()
                preds = await wm.predict_many(traj, acts)
                conc.append(time.perf_counter() - t)
                cached += sum(p.usage.cached_tokens or 0 for p in preds)
                prompt += sum(p.usage.prompt_tokens for p in preds)
            rate = (await fetch_metrics(base_url, model=wm.model)).since(before)
            hit = rate.prefix_cache_hit_rate
            s, c = statistics.median(seq), statistics.median(conc)
            print(
                f"{k:>3} {s:13.2f} {c:13.2f} {s / c:7.2f} {cached / max(prompt, 1):14.2f} "
                f"{'n/a' if hit is None else f'{hit:.0%}':>16}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-url", default=os.environ.get(ENV_BASE_URL))
    ap.add_argument("--model", default=os.environ.get(ENV_MODEL))
    ap.add_argument("--ks", default="1,2,4")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=32)
    args = ap.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    with ExitStack() as stack:
        base_url, model = args.base_url, args.model
        if not base_url:
            from aw_lookahead.serving import start_embedded_server

            server = stack.enter_context(start_embedded_server())
            base_url, model = server.base_url, server.model
        asyncio.run(run(base_url, model, ks, args.repeat, args.max_tokens))


if __name__ == "__main__":
    main()
