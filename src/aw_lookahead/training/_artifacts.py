"""Checkpoint folders, the trainer state file, saving a run's weights, the loss-curve plot.

Layout under ``<out>``::

    checkpoints/step-N/     accelerate state (trainable weights, optimizer, scheduler, RNG)
                            + trainer_state.json (step, loss history, tokens, label tokens)
                            + adapter/ (LoRA runs: that step's PEFT adapter, servable as is)
    encoded.jsonl.gz        the tokenised data (token ids only), reused by --resume
    encoded-heldout.jsonl.gz  the same for --eval-data
    best-adapter/           LoRA runs with --eval-data: the adapter of the best held-out loss
    metrics.jsonl           one line per optimizer step
    loss.png                the loss curve (GRPO also reward.png: reward and its parts)
    data_report.json        class counts and token counts of the data
    adapter/ or model/      the result (PEFT adapter, or the full model + tokenizer)
    train_result.json       summary of the run and the serving line
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from aw_lookahead._extras import require

from .config import TrainConfig

CHECKPOINTS = "checkpoints"
BEST_ADAPTER = "best-adapter"
STATE_FILE = "trainer_state.json"
_STEP_DIR = re.compile(r"^step-(\d+)$")


def checkpoint_dirs(out: Path) -> list[tuple[int, Path]]:
    """Complete checkpoints (those with a state file), oldest first."""
    root = out / CHECKPOINTS
    if not root.is_dir():
        return []
    found = []
    for child in root.iterdir():
        m = _STEP_DIR.match(child.name)
        if m and (child / STATE_FILE).is_file():
            found.append((int(m.group(1)), child))
    return sorted(found)


def latest_checkpoint(out: Path) -> tuple[int, Path] | None:
    dirs = checkpoint_dirs(out)
    return dirs[-1] if dirs else None


def write_state(folder: Path, state: dict[str, Any]) -> None:
    """Write the state file last, atomically: its presence marks the checkpoint complete."""
    tmp = folder / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state), encoding="utf-8")
    tmp.replace(folder / STATE_FILE)


def read_state(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    return data


def prune_checkpoints(out: Path, keep: int) -> None:
    """Delete all but the ``keep`` newest complete checkpoints."""
    dirs = checkpoint_dirs(out)
    for _, folder in dirs[: max(0, len(dirs) - keep)]:
        shutil.rmtree(folder, ignore_errors=True)


def copy_adapter(source: Path, target: Path) -> None:
    """Replace ``target`` with a copy of the adapter folder ``source`` (never half written:
    copied beside it, then swapped in)."""
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)


def plot_losses(
    losses: list[tuple[int, float]],
    path: Path,
    heldout: list[tuple[int, float]] | None = None,
) -> None:
    """Save the training-loss curve as a PNG (headless backend), with the held-out one if any."""
    matplotlib = require("train", "matplotlib")
    matplotlib.use("Agg", force=True)
    plt = require("train", "matplotlib.pyplot")
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    if losses:
        steps, values = zip(*losses, strict=True)
        ax.plot(
            steps, values, marker="." if len(losses) < 60 else None, linewidth=1, label="training"
        )
    if heldout:
        steps, values = zip(*heldout, strict=True)
        ax.plot(steps, values, marker="o", linewidth=1.5, label="held-out")
        ax.legend()
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training loss (labelled tokens)")
    ax.set_title("aw-lookahead warm-up fine-tuning")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_series(
    series: dict[str, list[tuple[int, float]]], path: Path, *, ylabel: str, title: str
) -> None:
    """Save several named per-step curves in one PNG (empty series are left out)."""
    matplotlib = require("train", "matplotlib")
    matplotlib.use("Agg", force=True)
    plt = require("train", "matplotlib.pyplot")
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    for name, points in series.items():
        if points:
            steps, values = zip(*points, strict=True)
            ax.plot(steps, values, marker="." if len(points) < 60 else None, label=name)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if any(series.values()):
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def save_checkpoint(
    acc: Any,
    cfg: TrainConfig,
    model: Any,
    step: int,
    losses: list[tuple[int, float]],
    tokens: int,
    label_tokens: int,
    extra: dict[str, Any],
) -> Path:
    """Save step ``step``'s checkpoint (for LoRA also a servable adapter) and prune old ones;
    the state file is written last, so a save cut short is not a checkpoint."""
    folder = cfg.out / CHECKPOINTS / f"step-{step}"
    acc.save_state(str(folder))
    if cfg.method == "lora":  # a servable adapter per checkpoint: evaluate or ship any step
        state = acc.get_state_dict(model)
        if acc.is_main_process:
            acc.unwrap_model(model).save_pretrained(
                str(folder / "adapter"), state_dict=state, safe_serialization=True
            )
    if acc.is_main_process:
        state = {"step": step, "losses": losses, "tokens": tokens, "label_tokens": label_tokens}
        write_state(folder, {**state, **extra})
        prune_checkpoints(cfg.out, cfg.keep_checkpoints)
    acc.wait_for_everyone()
    return folder


def save_output(acc: Any, cfg: TrainConfig, model: Any, tokenizer: Any) -> Path:
    """The run's result: ``adapter/`` (LoRA) or ``model/`` with its tokenizer (full)."""
    acc.wait_for_everyone()
    unwrapped = acc.unwrap_model(model)
    state = acc.get_state_dict(model)
    target = cfg.out / ("adapter" if cfg.method == "lora" else "model")
    if acc.is_main_process:
        unwrapped.save_pretrained(str(target), state_dict=state, safe_serialization=True)
        if cfg.method == "full":
            unwrapped.config.use_cache = True
            unwrapped.config.save_pretrained(str(target))
            tokenizer.save_pretrained(str(target))
    acc.wait_for_everyone()
    return target
