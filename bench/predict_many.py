"""K candidates per step: one concurrent ``predict_many`` vs K sequential ``predict`` calls.

    python bench/predict_many.py [--base-url URL --model NAME] [--ks 1,2,4] [--repeat 3]
                                 [--lines 5]

Without --base-url (or AW_LOOKAHEAD_BASE_URL) it starts the embedded model
on vLLM's CPU build (its /metrics count the prefix-cache hits). Each
repetition uses a fresh history of eight turns (a nonce in the task), so the
first request of a step pays the prefill and the others can reuse it from the
prefix cache. ``--lines`` log lines per turn set its size:
5 gives ~1,500 history tokens for the embedded model (the prompt tokens the
server counted are printed, system prompt included). Prints wall time per
step for both ways, their ratio, the cached prompt tokens the replies
reported, and the server's prefix-cache hit rate over each K's steps (from
``/metrics``, both ways together).

Then one check in an agent's loop: the same history, checked once cold and
once after the check of the step before it (the history less its last turn,
as an agent gated that step), whose prompt the server's prefix cache still
holds. Both are medians over ``--repeat`` fresh histories.
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


def _history(lines: int) -> Trajectory:
    nonce = uuid.uuid4().hex
    return Trajectory(
        domain="terminal",
        task=f"Audit the logs {nonce}",
        turns=[
            Turn(
                action=[{"keystrokes": f"tail -n 20 app{i}.log\n", "duration": 0.5}],
                observation="\n".join(
                    f"2026-11-29 07:{i:02d}:{j:02d} INFO job {j} ok" for j in range(lines)
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
    base_url: str, model: str | None, ks: list[int], repeat: int, max_tokens: int, lines: int
) -> None:
    async with OpenAIWorldModel(
        model, base_url=base_url, max_tokens=max_tokens, temperature=0.6, timeout=300
    ) as wm:
        first = await wm.predict(_history(lines), "echo warm-up")
        print(
            f"model {wm.model} at {base_url}; max_tokens {max_tokens}; {repeat} steps per cell; "
            f"{first.usage.prompt_tokens} prompt tokens per request"
        )
        print(
            f"{'K':>3} {'sequential s':>13} {'concurrent s':>13} {'ratio':>7} "
            f"{'cached/prompt':>14} {'server hit rate':>16}"
        )
        for k in ks:
            acts = [[{"keystrokes": c, "duration": 0.5}] for c in CANDIDATES[:k]]
            seq, conc, cached, prompt = [], [], 0, 0
            before = await fetch_metrics(base_url, model=wm.model)
            for _ in range(repeat):
                traj = _history(lines)
                t = time.perf_counter()
                for a in acts:
                    await wm.predict(traj, a)
                seq.append(time.perf_counter() - t)
                traj = _history(lines)
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
        await _agent_loop(wm, lines, repeat)


async def _agent_loop(wm: OpenAIWorldModel, lines: int, repeat: int) -> None:
    """One check cold, and one check after the previous step's (its prefix cached)."""
    act = [{"keystrokes": CANDIDATES[1], "duration": 0.5}]
    before = [{"keystrokes": "tail -n 20 app7.log\n", "duration": 0.5}]
    cold, warm, cached, prompt = [], [], 0, 0
    for _ in range(repeat):
        t = time.perf_counter()
        await wm.predict(_history(lines), act)
        cold.append(time.perf_counter() - t)
        traj = _history(lines)
        await wm.predict(traj.model_copy(update={"turns": traj.turns[:-1]}), before)
        t = time.perf_counter()
        pred = await wm.predict(traj, act)
        warm.append(time.perf_counter() - t)
        cached += pred.usage.cached_tokens or 0
        prompt += pred.usage.prompt_tokens
    print(
        f"one check: cold {statistics.median(cold):.2f} s; after the previous step's check "
        f"{statistics.median(warm):.2f} s (cached/prompt {cached / max(prompt, 1):.2f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-url", default=os.environ.get(ENV_BASE_URL))
    ap.add_argument("--model", default=os.environ.get(ENV_MODEL))
    ap.add_argument("--ks", default="1,2,4")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--lines", type=int, default=5, help="log lines per turn (default 5)")
    args = ap.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    with ExitStack() as stack:
        base_url, model = args.base_url, args.model
        if not base_url:
            from aw_lookahead.serving import start_embedded_server

            server = stack.enter_context(start_embedded_server(runtime="vllm"))  # its /metrics
            base_url, model = server.base_url, server.model
        asyncio.run(run(base_url, model, ks, args.repeat, args.max_tokens, args.lines))


if __name__ == "__main__":
    main()
