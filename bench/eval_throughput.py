"""``eval run`` throughput: concurrency 1 (the reference script's way) vs N, in one run.

    python bench/eval_throughput.py --base-url URL --model NAME [--concurrency 8]
        [--data examples/data/agentworldbench_terminal.jsonl] [--limit 16] [--max-tokens 32]

Runs the same samples twice through ``predict_samples`` (fresh output folders,
no resume): once one request at a time, once with N in flight. Prints
samples/s and completion tokens/s of both and the ratio N:1. Numbers depend
on the server; on a shared CPU server they are small and noisy, and value
claims need the reference model on a GPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from pathlib import Path

from aw_lookahead.evaluation import latest_records, load_samples, predict_samples
from aw_lookahead.worldmodel import OpenAIWorldModel

DATA = Path(__file__).resolve().parents[1] / "examples" / "data" / "agentworldbench_terminal.jsonl"


async def _measure(args: argparse.Namespace, concurrency: int) -> dict[str, float]:
    samples = load_samples(args.data, limit=args.limit)
    wm = OpenAIWorldModel(
        args.model,
        base_url=args.base_url,
        max_tokens=args.max_tokens,
        max_concurrency=concurrency,
        timeout=300.0,
    )
    async with wm:
        await wm.resolve_model()
        with tempfile.TemporaryDirectory() as out:
            stats = await predict_samples(
                samples, wm, out, concurrency=concurrency, progress=False, resume=False
            )
            recs = latest_records(Path(out) / "predictions.jsonl").values()
            tokens = sum(r.get("usage", {}).get("completion_tokens", 0) for r in recs)
    return {
        "concurrency": concurrency,
        "samples": stats.ok + stats.failed,
        "failed": stats.failed,
        "wall_s": round(stats.wall_s, 2),
        "samples_per_s": round(stats.samples_per_s, 3),
        "completion_tokens_per_s": round(tokens / stats.wall_s, 1) if stats.wall_s else 0.0,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", default=os.environ.get("AW_LOOKAHEAD_BASE_URL"), required=False)
    p.add_argument("--model", default=os.environ.get("AW_LOOKAHEAD_MODEL"))
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--limit", type=int, default=16)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if not args.base_url:
        p.error("pass --base-url (or set AW_LOOKAHEAD_BASE_URL) of a running server")
    one = asyncio.run(_measure(args, 1))
    many = asyncio.run(_measure(args, args.concurrency))
    ratio = many["samples_per_s"] / one["samples_per_s"] if one["samples_per_s"] else 0.0
    result = {"sequential": one, "concurrent": many, "ratio": round(ratio, 2)}
    if args.json:
        print(json.dumps(result))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"eval run throughput ({one['samples']} samples, {args.max_tokens} tok)")
    cols = ("concurrency", "wall_s", "samples_per_s", "completion_tokens_per_s", "failed")
    for col in cols:
        table.add_column(col, justify="right")
    for row in (one, many):
        table.add_row(*(str(row[c]) for c in cols))
    Console().print(table)
    print(f"ratio concurrency {args.concurrency} : 1 = {ratio:.2f}x")


if __name__ == "__main__":
    main()
