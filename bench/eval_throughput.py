"""``eval run`` throughput: a sequential run (the reference script's way) vs N in flight.

    python bench/eval_throughput.py --base-url URL --model NAME [--concurrency 8]
        [--protocol official|ours] [--data examples/data/agentworldbench_terminal.jsonl]
        [--limit 16] [--max-tokens 32]

Sends the same requests twice through ``predict_samples`` (fresh output
folders, no resume): once one at a time, as the reference script does, once
with N in flight. Prints samples/s and completion tokens/s of both and the
side-by-side ratio N:1. The default protocol is ``official``, so both runs send
byte-identical request bodies to what the reference script sends.

The ratio is bounded by the server's compute: concurrency only lets the server
batch requests. On a CPU server it holds only while the cores have room (a
small model, short prompts, an idle machine); once they are saturated (other
load, long prompts, a bigger model) a batch of N costs about N single requests
and the ratio falls toward 1. On a GPU, where decoding is memory-bound, batching
is where the gain comes from.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from pathlib import Path

from aw_lookahead.endpoint import ENV_BASE_URL, ENV_MODEL
from aw_lookahead.evaluation.official import OfficialModel
from aw_lookahead.evaluation.records import latest_records, load_samples
from aw_lookahead.evaluation.runner import predict_samples
from aw_lookahead.worldmodel import OpenAIWorldModel

DATA = Path(__file__).resolve().parents[1] / "examples" / "data" / "agentworldbench_terminal.jsonl"


async def _measure(args: argparse.Namespace, concurrency: int) -> dict[str, float]:
    samples = load_samples(args.data, limit=args.limit, pattern="*.jsonl")
    wm: OfficialModel | OpenAIWorldModel
    if args.protocol == "official":
        wm = OfficialModel(args.model, base_url=args.base_url, max_tokens=args.max_tokens)
    else:
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
    p.add_argument("--base-url", default=os.environ.get(ENV_BASE_URL), required=False)
    p.add_argument("--model", default=os.environ.get(ENV_MODEL))
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--limit", type=int, default=16)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--protocol", choices=("official", "ours"), default="official")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if not args.base_url:
        p.error("pass --base-url (or set AW_LOOKAHEAD_BASE_URL) of a running server")
    one = asyncio.run(_measure(args, 1))
    many = asyncio.run(_measure(args, args.concurrency))
    ratio = many["samples_per_s"] / one["samples_per_s"] if one["samples_per_s"] else 0.0
    result = {
        "protocol": args.protocol,
        "sequential": one,
        "concurrent": many,
        "ratio": round(ratio, 2),
        "bound": "the server's compute: on a saturated CPU a batch of N costs ~N requests",
    }
    if args.json:
        print(json.dumps(result))
        return
    from rich.console import Console
    from rich.table import Table

    title = f"eval run throughput, protocol {args.protocol} ({one['samples']} samples, "
    table = Table(title=title + f"{args.max_tokens} tok)")
    cols = ("concurrency", "wall_s", "samples_per_s", "completion_tokens_per_s", "failed")
    for col in cols:
        table.add_column(col, justify="right")
    for row in (one, many):
        table.add_row(*(str(row[c]) for c in cols))
    Console().print(table)
    print(
        f"side-by-side ratio, concurrency {args.concurrency} vs sequential (the reference "
        f"script's way): {ratio:.2f}x; {many['samples_per_s']} vs {one['samples_per_s']} "
        "samples/s. The ratio is bounded by the server's compute: on a CPU it falls toward 1 "
        "once the cores are saturated (a batch of N then costs ~N requests)."
    )


if __name__ == "__main__":
    main()
