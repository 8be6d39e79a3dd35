"""Training throughput in label tokens per second: the old recipe against the new, one run.

Usage (CPU, the embedded SmolLM2-135M)::

    .venv/bin/python bench/train_throughput.py --steps 6 --rounds 2
    .venv/bin/python bench/train_throughput.py --data runs/embedded-data/terminal/train.jsonl \\
        --threads 1 --json

The *old* recipe is this project's trainer before the change: the standard
system prompts, logits at every position and PEFT's LoRA layers. The *new*
one is the default for the embedded model: the short prompt profile, logits
only where a label token is predicted and each LoRA layer as one autograd
node (``lora_kernel="fused"``). Both run real LoRA steps (``targets=all``, one
sequence per trajectory, batch 1) on the same trajectories; each round runs
old then new, so load drifts hit both. Throughput is label tokens per
second over the steps after the first (which pays for warm-up); label tokens
are what a run learns from, so a shorter prompt that carries the same labels
counts as faster. The machine's load average is printed with every number.
``--recipes old,new-peft,new`` adds the new recipe with PEFT's LoRA layers:
its step losses are the fused kernel's to float rounding (printed), so the
pair isolates that change.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples" / "data" / "terminal_trajectories.jsonl"
RECIPES: dict[str, dict[str, Any]] = {
    "old": {"prompt_profile": "standard", "logits": "all", "lora_kernel": "peft"},
    "new": {"prompt_profile": "short", "logits": "labels", "lora_kernel": "fused"},
    "new-peft": {"prompt_profile": "short", "logits": "labels", "lora_kernel": "peft"},
}


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f} on {os.cpu_count()} cpus"


def _steady(out: Path) -> tuple[float, int, int]:
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines() if x]
    first, last = rows[0], rows[-1]
    secs = last["elapsed_s"] - first["elapsed_s"]
    labels = last["label_tokens"] - first["label_tokens"]
    tokens = last["tokens"] - first["tokens"]
    return (labels / secs if secs > 0 else 0.0), labels, tokens


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, default=None, help="HF folder (default: embedded base)")
    p.add_argument("--data", type=Path, nargs="+", default=[DATA])
    p.add_argument("--steps", type=int, default=6, help="optimizer steps per recipe and round")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--max-len", type=int, default=2048)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--recipes",
        default="old,new",
        help=f"comma-separated, run in this order each round (of {', '.join(RECIPES)})",
    )
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    chosen = [r.strip() for r in args.recipes.split(",") if r.strip()]
    unknown = [r for r in chosen if r not in RECIPES]
    if unknown or "old" not in chosen or "new" not in chosen:
        p.error(f"--recipes must name old and new, from {', '.join(RECIPES)}; got {args.recipes}")

    from aw_lookahead.training import TrainConfig, train

    if args.model is None:
        from aw_lookahead.embedded import prepare_embedded_model

        args.model = prepare_embedded_model(base_only=True)
    rates: dict[str, list[float]] = {name: [] for name in chosen}
    rows = []
    for rnd in range(args.rounds):
        for name in chosen:
            recipe = RECIPES[name]
            with tempfile.TemporaryDirectory() as tmp:
                cfg = TrainConfig(
                    model=args.model,
                    data=list(args.data),
                    out=Path(tmp),
                    targets="all",
                    max_len=args.max_len,
                    max_steps=args.steps,
                    lr=1e-4,
                    save_every=10_000,
                    progress=False,
                    gradient_checkpointing=False,
                    threads=args.threads,
                    seed=rnd,
                    **recipe,
                )
                before = _load()
                result = train(cfg)
                rate, labels, tokens = _steady(Path(tmp))
            rates[name].append(rate)
            row = {
                "round": rnd,
                "recipe": name,
                **recipe,
                "label_tokens_per_s": round(rate, 1),
                "label_tokens": labels,
                "tokens": tokens,
                "label_share": round(labels / tokens, 3) if tokens else 0.0,
                "losses": [round(v, 6) for _, v in result.losses],
                "load_before": before,
                "load_after": _load(),
            }
            rows.append(row)
            if not args.json:
                print(
                    f"round {rnd} {name:<8} {rate:7.1f} label tokens/s  label share "
                    f"{row['label_share']:.1%}  last loss {row['losses'][-1]:.6f}  "
                    f"({before} -> {row['load_after']})",
                    flush=True,
                )
    old, new = statistics.median(rates["old"]), statistics.median(rates["new"])
    summary: dict[str, Any] = {
        "old_label_tokens_per_s": round(old, 1),
        "new_label_tokens_per_s": round(new, 1),
        "speedup": round(new / old, 2) if old else None,
        "threads": args.threads,
        "steps": args.steps,
        "rounds": args.rounds,
        "data": [str(d) for d in args.data],
    }
    if "new-peft" in rates:
        summary["new_peft_label_tokens_per_s"] = round(statistics.median(rates["new-peft"]), 1)
    if args.json:
        json.dump({"runs": rows, "summary": summary}, sys.stdout, indent=2)
        print()
    else:
        print(
            f"median: old {old:.1f}, new {new:.1f} label tokens/s -> {summary['speedup']}x "
            f"({args.threads} thread(s), {args.steps} steps x {args.rounds} rounds)"
        )
        if "new-peft" in rates:
            peft_rate = summary["new_peft_label_tokens_per_s"]
            ratio = new / peft_rate if peft_rate else 0.0
            print(f"median new-peft {peft_rate:.1f} label tokens/s; fused kernel x{ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
