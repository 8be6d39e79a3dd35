"""The trainer's loss: the mean over a whole step's label tokens, and the same with logits
computed only at label positions; the run's tokenised data is reused while it is unchanged."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.prompts import profile_prompts
from aw_lookahead.training import ClassifyConfig, TrainConfig, batch_order, train
from aw_lookahead.training.dataset_cache import ENCODED_FILE, load_or_prepare

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

DATA = Path(__file__).resolve().parents[1] / "examples" / "data" / "terminal_trajectories.jsonl"


def _config(model: Path, out: Path, logits: str) -> TrainConfig:
    return TrainConfig(
        model=model,
        data=[DATA],
        out=out,
        targets="all",
        max_len=768,
        max_steps=1,
        grad_accum=3,
        lr=1e-4,
        progress=False,
        gradient_checkpointing=False,
        threads=1,
        logits=logits,  # type: ignore[arg-type]
        prompt_profile="short",
        save_every=100,
    )


class _EndedDataloader:
    end_of_dataloader = True


def _direct_step_loss(model_dir: Path, out: Path) -> float:
    """Step 1's loss computed by hand: summed token cross-entropy of the step's three
    sequences over their label count, on the base weights (LoRA starts as a no-op)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tok = transformers.AutoTokenizer.from_pretrained(str(model_dir))
    samples, _, cached = load_or_prepare(
        out,
        [DATA],
        tok,
        max_len=768,
        targets="all",
        config=ClassifyConfig(),
        prompts=profile_prompts("short"),
    )
    assert cached
    model = transformers.AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    total, count = 0.0, 0
    for micro in range(3):
        (index,) = batch_order(len(samples), micro, 1, 0)
        s = samples[index]
        ids = torch.tensor([s.input_ids])
        labels = torch.tensor([s.labels])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, :-1]
        target = labels[0, 1:]
        total += float(
            torch.nn.functional.cross_entropy(logits, target, ignore_index=-100, reduction="sum")
        )
        count += int((target != -100).sum())
    return total / count


def test_step_loss_is_the_mean_over_the_steps_label_tokens_with_either_logits_mode(
    tmp_path: Path, embedded_model_path: Path
) -> None:
    """Also with an ended dataloader left registered in accelerate's process-wide state, as
    TRL's GRPO trainer leaves one: the step must still accumulate all three micro-batches."""
    accelerate_state = pytest.importorskip("accelerate.state")
    left_over = _EndedDataloader()
    gradient_state = accelerate_state.GradientState()
    gradient_state._add_dataloader(left_over)
    results: dict[str, Any] = {}
    try:
        for mode in ("all", "labels"):
            results[mode] = train(_config(embedded_model_path, tmp_path / mode, mode))
    finally:
        gradient_state._remove_dataloader(left_over)
    a, b = results["all"], results["labels"]
    assert a.losses[0][1] == pytest.approx(b.losses[0][1], rel=1e-5)
    assert a.label_tokens == b.label_tokens > 0
    expected = _direct_step_loss(embedded_model_path, tmp_path / "labels")
    assert b.losses[0][1] == pytest.approx(expected, rel=1e-4)
    saved = json.loads((tmp_path / "labels" / "train_result.json").read_text())
    assert saved["prompt_profile"] == "short"
    assert saved["threads"] == 1
    assert saved["label_tokens_this_run"] == b.label_tokens


def test_encoded_data_is_reused_until_the_data_changes(
    tmp_path: Path, embedded_model_path: Path
) -> None:
    transformers = pytest.importorskip("transformers")
    tok = transformers.AutoTokenizer.from_pretrained(str(embedded_model_path))
    data = tmp_path / "data.jsonl"
    shutil.copyfile(DATA, data)
    out = tmp_path / "run"
    kw: dict[str, Any] = {
        "max_len": 768,
        "targets": "all",
        "config": ClassifyConfig(),
        "prompts": profile_prompts("short"),
    }
    first, report, cached = load_or_prepare(out, [data], tok, **kw)
    assert not cached
    assert (out / ENCODED_FILE).is_file()
    again, report2, cached2 = load_or_prepare(out, [data], tok, **kw)
    assert cached2
    assert [(s.input_ids, s.labels) for s in again] == [(s.input_ids, s.labels) for s in first]
    assert report2.label_tokens == report.label_tokens
    other, _, cached3 = load_or_prepare(
        out, [data], tok, **{**kw, "prompts": profile_prompts("standard")}
    )
    assert not cached3
    assert len(other[0].input_ids) > len(first[0].input_ids)  # the standard prompt is longer
    lines = data.read_text().splitlines()
    data.write_text("\n".join(lines[:-1]) + "\n")
    fewer, _, cached4 = load_or_prepare(out, [data], tok, **kw)
    assert not cached4
    assert len(fewer) == len(first) - 1


def test_the_fingerprint_is_the_same_in_every_interpreter(embedded_model_path: Path) -> None:
    """A ``--resume`` slice is a new process: string hashing (set order) must not matter."""
    import subprocess
    import sys

    code = (
        "import sys; from pathlib import Path\n"
        "from transformers import AutoTokenizer\n"
        "from aw_lookahead.prompts import profile_prompts\n"
        "from aw_lookahead.training import ClassifyConfig\n"
        "from aw_lookahead.training.dataset_cache import data_fingerprint\n"
        "tok = AutoTokenizer.from_pretrained(sys.argv[1])\n"
        "print(data_fingerprint([Path(sys.argv[2])], tok, max_len=768, targets='all', "
        "config=ClassifyConfig(), prompts=profile_prompts('short')))\n"
    )
    prints = set()
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", code, str(embedded_model_path), str(DATA)],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        prints.add(done.stdout.strip().splitlines()[-1])
    assert len(prints) == 1
