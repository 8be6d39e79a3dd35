"""Serving benchmark for lookahead: K candidates per step over a shared history.

Run it against any vLLM server (GPU for real numbers; the CPU server with
``--small`` to keep it working)::

    aw-lookahead serve --preset qwen-agentworld-35b-a3b &      # on a GPU box
    python bench/gpu_serving.py --base-url http://127.0.0.1:8000/v1

    python bench/gpu_serving.py --small --base-url http://127.0.0.1:8765/v1   # CPU server

For every history length and thinking setting the script builds a fresh
terminal history (a nonce at its start, so no earlier run warms the cache),
sends one K=1 step to prefill it (reported as ``cold s``), then for each K runs
``--steps`` steps of K candidate actions with ``predict_many``. Reported per
cell: mean latency per step, completion tokens/s, the prefix-cache hit rate
of that cell from ``/metrics`` (Δhits/Δqueries; other traffic on the server
counts too), the cached share of prompt tokens reported per reply, and the
K-candidate latency ratio against one prediction (K=1) on the same history.
Cells whose prompt plus ``--max-tokens`` exceed the server's context are
skipped and listed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

from aw_lookahead.prompts import render_messages
from aw_lookahead.serving.metrics import fetch_metrics
from aw_lookahead.trajectory import Action, Trajectory, Turn
from aw_lookahead.worldmodel import OpenAIWorldModel

CHARS_PER_TOKEN = 3.2  # fallback only, where the server has no /tokenize


@dataclass
class Cell:
    history: int
    thinking: bool
    k: int
    prompt_tokens: float
    cold_s: float
    step_s: float
    tokens_per_s: float
    hit_rate: float | None
    cached_share: float | None
    ratio_vs_k1: float | None = None


def _turn(i: int) -> Turn:
    lines = "\n".join(
        f"-rw-r--r-- 1 dev dev {1000 + 37 * j + i} Nov 29 07:{j % 60:02d} module_{i}_{j}.py"
        for j in range(5)
    )
    obs = f"$ ls -l pkg/sub{i}\ntotal {5 * i}\n{lines}\n$ "
    return Turn(action=[{"keystrokes": f"ls -l pkg/sub{i}\n", "duration": 0.5}], observation=obs)


def _trajectory(nonce: str, n_turns: int) -> Trajectory:
    return Trajectory(
        domain="terminal",
        task=f"Audit the package layout (session {nonce}).",
        turns=[_turn(i) for i in range(n_turns)],
    )


async def count_tokens(args: argparse.Namespace, trajectory: Trajectory) -> int:
    """Prompt tokens of one step via vLLM's ``/tokenize`` (chars/3.2 where it is missing)."""
    messages = render_messages(trajectory, candidates(0, 1)[0])
    root = args.base_url.rstrip("/").removesuffix("/v1")
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    try:
        async with httpx.AsyncClient(timeout=30.0, trust_env=False) as http:
            reply = await http.post(
                f"{root}/tokenize", json={"model": args.model, "messages": messages},
                headers=headers,
            )  # fmt: skip
        count = reply.json().get("count")
        if isinstance(count, int):
            return count
    except (httpx.HTTPError, ValueError, AttributeError):
        pass
    return int(sum(len(m["content"]) for m in messages) / CHARS_PER_TOKEN)


async def build_history(args: argparse.Namespace, target_tokens: int) -> Trajectory:
    """A terminal session whose prompt (system prompt included) is ~``target_tokens`` tokens.

    A fresh nonce in the first user turn keeps earlier runs from warming the cache
    (the system prompt before it is shared, as in real use).
    """
    nonce = uuid.uuid4().hex
    base = await count_tokens(args, _trajectory(nonce, 0))
    two = await count_tokens(args, _trajectory(nonce, 2))
    per_turn = max(1.0, (two - base) / 2)
    n_turns = max(1, round((target_tokens - base) / per_turn))
    return _trajectory(nonce, n_turns)


def candidates(step: int, k: int) -> list[Action]:
    return [
        [{"keystrokes": f"wc -l pkg/sub{step}/module_{step}_{c}.py\n", "duration": 0.5}]
        for c in range(k)
    ]


async def context_limit(wm: OpenAIWorldModel) -> int | None:
    models = await wm.list_models()
    match = next((m for m in models if m.id == wm.model), None)
    return match.max_model_len if match else None


async def run_cell_group(
    args: argparse.Namespace, history: int, thinking: bool, limit: int | None
) -> tuple[list[Cell], str | None]:
    async with OpenAIWorldModel(
        args.model, base_url=args.base_url, api_key=args.api_key, max_tokens=args.max_tokens,
        thinking=thinking, timeout=args.timeout, max_concurrency=max(args.k),
    ) as wm:  # fmt: skip
        await wm.resolve_model()
        if limit is not None and history + args.max_tokens > limit:
            return [], f"history {history} + max_tokens {args.max_tokens} > context {limit}"
        trajectory = await build_history(args, history)
        started = time.perf_counter()
        await wm.predict_many(trajectory, candidates(0, 1))
        cold = time.perf_counter() - started
        cells: list[Cell] = []
        for k in args.k:
            before = await fetch_metrics(args.base_url, api_key=args.api_key, model=wm.model)
            latencies: list[float] = []
            completion = prompt = cached = 0
            wall = 0.0
            for step in range(1, args.steps + 1):
                started = time.perf_counter()
                preds = await wm.predict_many(trajectory, candidates(step, k))
                elapsed = time.perf_counter() - started
                wall += elapsed
                latencies.append(elapsed)
                completion += sum(p.usage.completion_tokens for p in preds)
                prompt += sum(p.usage.prompt_tokens for p in preds)
                cached += sum(p.usage.cached_tokens or 0 for p in preds)
            after = await fetch_metrics(args.base_url, api_key=args.api_key, model=wm.model)
            cells.append(
                Cell(
                    history=history,
                    thinking=thinking,
                    k=k,
                    prompt_tokens=prompt / (k * args.steps),
                    cold_s=cold,
                    step_s=statistics.mean(latencies),
                    tokens_per_s=completion / wall if wall else 0.0,
                    hit_rate=after.since(before).prefix_cache_hit_rate,
                    cached_share=cached / prompt if prompt else None,
                )
            )
    base = next((c for c in cells if c.k == 1), None)
    for c in cells:
        c.ratio_vs_k1 = c.step_s / base.step_s if base and base.step_s else None
    return cells, None


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.0%}"


def table(cells: list[Cell]) -> str:
    head = (
        "| history target tok | prompt tok | thinking | K | cold s | latency/step s "
        "| tok/s | prefix hit rate | cached share | K vs K=1 |"
    )
    rows = [head, "|" + "---|" * 10]
    for c in cells:
        ratio = "n/a" if c.ratio_vs_k1 is None else f"{c.ratio_vs_k1:.2f}x"
        rows.append(
            f"| {c.history} | {c.prompt_tokens:.0f} | {'on' if c.thinking else 'off'} | {c.k} "
            f"| {c.cold_s:.2f} | {c.step_s:.2f} | {c.tokens_per_s:.1f} | {_pct(c.hit_rate)} "
            f"| {_pct(c.cached_share)} | {ratio} |"
        )
    return "\n".join(rows)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", default="http://127.0.0.1:8000/v1")
    p.add_argument("--model", help="served model name (default: the only one served)")
    p.add_argument("--api-key", default=None)
    p.add_argument(
        "--small", action="store_true", help="CPU sizes: K 1,2,4; history 1536,3072 tokens"
    )
    p.add_argument("--k", help="comma-separated K values (default 1,2,4,8)")
    p.add_argument("--history", help="comma-separated history lengths in tokens")
    p.add_argument("--thinking", default="off,on", help="off, on or off,on")
    p.add_argument("--steps", type=int, help="steps per cell (default 3; --small 2)")
    p.add_argument("--max-tokens", type=int, help="output budget (default 512; --small 16)")
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--json", dest="json_path", help="also write the cells to this JSON file")
    args = p.parse_args(argv)
    small = args.small
    args.k = [int(x) for x in (args.k or ("1,2,4" if small else "1,2,4,8")).split(",")]
    args.history = [
        int(x) for x in (args.history or ("1536,3072" if small else "2048,16384,65536")).split(",")
    ]
    args.thinking = [t.strip() == "on" for t in args.thinking.split(",")]
    args.steps = args.steps or (2 if small else 3)
    args.max_tokens = args.max_tokens or (16 if small else 512)
    return args


async def amain(args: argparse.Namespace) -> int:
    async with OpenAIWorldModel(args.model, base_url=args.base_url, api_key=args.api_key) as wm:
        args.model = await wm.resolve_model()
        limit = await context_limit(wm)
    print(f"server {args.base_url}  model {args.model}  context {limit}  K {args.k}  "
          f"steps {args.steps}  max_tokens {args.max_tokens}", flush=True)  # fmt: skip
    overall_before = await fetch_metrics(args.base_url, api_key=args.api_key, model=args.model)
    started = time.perf_counter()
    cells: list[Cell] = []
    skipped: list[str] = []
    for history in args.history:
        for thinking in args.thinking:
            got, why = await run_cell_group(args, history, thinking, limit)
            cells += got
            if why:
                skipped.append(why)
            for c in got:
                print(f"  history {c.history} thinking {c.thinking} K {c.k}: "
                      f"{c.step_s:.2f} s/step", file=sys.stderr, flush=True)  # fmt: skip
    overall = (await fetch_metrics(args.base_url, api_key=args.api_key, model=args.model)).since(
        overall_before
    )
    print(table(cells))
    for why in sorted(set(skipped)):
        print(f"skipped: {why}")
    print(f"run: {time.perf_counter() - started:.1f} s, prefix-cache hit rate of the whole run "
          f"{_pct(overall.prefix_cache_hit_rate)}")  # fmt: skip
    if args.json_path:
        report = {
            "cells": [asdict(c) for c in cells],
            "skipped": skipped,
            "run_hit_rate": overall.prefix_cache_hit_rate,
        }
        text = json.dumps(report, indent=2)
        await asyncio.to_thread(Path(args.json_path).write_text, text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(amain(parse_args())))
