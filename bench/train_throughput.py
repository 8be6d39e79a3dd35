"""Training throughput and the share of masked tokens on the example terminal data.

Usage (CPU, the embedded SmolLM2-135M)::

    .venv/bin/python bench/train_throughput.py --steps 4
    .venv/bin/python bench/train_throughput.py --model <hf folder> --steps 20 --method full

Prints, for each target mode, the samples, tokens and the share of input
tokens that carry no loss; then runs ``--steps`` optimizer steps of a real
``train()`` and prints training tokens/s (input tokens incl. masked ones,
measured over the steps after the first, which pays for warm-up).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples" / "data" / "terminal_trajectories.jsonl"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, default=None, help="HF folder (default: embedded)")
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--max-len", type=int, default=1024)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--method", choices=("lora", "full"), default="lora")
    p.add_argument("--targets", choices=("each", "all", "one"), default="each")
    p.add_argument("--no-gradient-checkpointing", action="store_true")
    args = p.parse_args(argv)

    from transformers import AutoTokenizer

    from aw_lookahead.training import TrainConfig, prepare_dataset, train

    if args.model is None:
        from aw_lookahead.embedded import prepare_embedded_model

        args.model = prepare_embedded_model(base_only=True)
    tok = AutoTokenizer.from_pretrained(str(args.model))
    print(f"data {args.data}")
    for mode in ("each", "all", "one"):
        _, rep = prepare_dataset([args.data], tok, max_len=args.max_len, targets=mode)
        print(
            f"targets={mode:<4} samples {rep.samples:>3}  tokens {rep.total_tokens:>6}  "
            f"label tokens {rep.label_tokens:>5}  masked share {rep.masked_share:.1%}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        cfg = TrainConfig(
            model=args.model,
            data=[args.data],
            out=Path(tmp),
            method=args.method,
            targets=args.targets,
            max_len=args.max_len,
            max_steps=args.steps,
            batch_size=args.batch_size,
            lora_r=16,
            save_every=10_000,
            progress=False,
            gradient_checkpointing=not args.no_gradient_checkpointing,
        )
        began = time.perf_counter()
        result = train(cfg)
        wall = time.perf_counter() - began
        metrics = [json.loads(x) for x in (Path(tmp) / "metrics.jsonl").read_text().splitlines()]
    if len(metrics) >= 2:
        toks = metrics[-1]["tokens"] - metrics[0]["tokens"]
        secs = metrics[-1]["elapsed_s"] - metrics[0]["elapsed_s"]
        steady = toks / secs if secs > 0 else 0.0
    else:
        steady = result.tokens_per_s
    print(
        f"train {args.method} targets={args.targets} steps {result.step} "
        f"batch {args.batch_size}: {result.tokens} tokens in {result.seconds:.1f} s "
        f"({result.tokens_per_s:.1f} tokens/s incl. first step, {steady:.1f} tokens/s after it; "
        f"{wall:.1f} s with model load and data prep); loss {result.losses[0][1]:.3f} -> "
        f"{result.losses[-1][1]:.3f}; masked share {result.report.masked_share:.1%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
