"""The trainer's loss: the mean over a whole step's label tokens, and the same with logits
computed only at label positions; outcome lines weighted; the run's tokenised data is reused
while it is unchanged."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.prompts import history_messages, profile_prompts
from aw_lookahead.training import TrainConfig, train
from aw_lookahead.training.classify import ClassifyConfig, TurnClass
from aw_lookahead.training.data import ChatSample, encode_sample
from aw_lookahead.training.dataset_cache import ENCODED_FILE, load_or_prepare
from aw_lookahead.training.trainer import batch_order
from aw_lookahead.trajectory import Trajectory

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

DATA = Path(__file__).resolve().parents[1] / "examples" / "data" / "terminal_trajectories.jsonl"


def _config(model: Path, out: Path, logits: str, lead_weight: float = 1.0) -> TrainConfig:
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
        lead_weight=lead_weight,
        prompt_profile="short",
        save_every=100,
    )


class _EndedDataloader:
    end_of_dataloader = True


def _direct_step_loss(model_dir: Path, out: Path) -> tuple[float, float]:
    """Step 1's loss computed by hand: summed token cross-entropy of the step's three
    sequences over their label count, on the base weights (LoRA starts as a no-op); and the
    same over the tokens of their outcome lines."""
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
    total, count, lead_total, lead_count = 0.0, 0, 0.0, 0
    for micro in range(3):
        (index,) = batch_order(len(samples), micro, 1, 0)
        s = samples[index]
        ids = torch.tensor([s.input_ids])
        labels = torch.tensor([s.labels])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, :-1]
        target = labels[0, 1:]
        ce = torch.nn.functional.cross_entropy(logits, target, ignore_index=-100, reduction="none")
        total += float(ce.sum())
        count += int((target != -100).sum())
        for start, end in s.lead:
            lead_total += float(ce[start - 1 : end - 1].sum())
            lead_count += end - start
    return total / count, lead_total / lead_count


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
    rows = [json.loads((tmp_path / m / "metrics.jsonl").read_text()) for m in ("all", "labels")]
    assert rows[0]["lead_loss"] == pytest.approx(rows[1]["lead_loss"], rel=1e-5)
    expected, _ = _direct_step_loss(embedded_model_path, tmp_path / "labels")
    assert b.losses[0][1] == pytest.approx(expected, rel=1e-4)
    saved = json.loads((tmp_path / "labels" / "train_result.json").read_text())
    assert saved["prompt_profile"] == "short"
    assert saved["threads"] == 1
    assert saved["label_tokens_this_run"] == b.label_tokens


def _adapter_bytes(out: Path) -> bytes:
    return (out / "adapter" / "adapter_model.safetensors").read_bytes()


def test_lead_weight_moves_the_gradient_toward_outcome_lines_and_records_their_loss(
    tmp_path: Path, embedded_model_path: Path
) -> None:
    """Weighting outcome lines changes the update, not the plain loss step 1 reports (it is
    read on the same starting weights); ``lead_loss`` is their mean cross-entropy."""
    runs = {w: train(_config(embedded_model_path, tmp_path / f"w{w}", "labels", w)) for w in (1, 8)}
    assert runs[1].losses[0][1] == pytest.approx(runs[8].losses[0][1], rel=1e-5)
    plain, lead = _direct_step_loss(embedded_model_path, tmp_path / "w8")
    assert runs[8].losses[0][1] == pytest.approx(plain, rel=1e-4)
    for w in (1, 8):
        row = json.loads((tmp_path / f"w{w}" / "metrics.jsonl").read_text().splitlines()[0])
        assert row["lead_loss"] == pytest.approx(lead, rel=1e-4)
    assert lead != pytest.approx(plain, rel=0.05)  # the outcome lines are not just any tokens
    assert _adapter_bytes(tmp_path / "w1") != _adapter_bytes(tmp_path / "w8")
    saved = json.loads((tmp_path / "w8" / "train_result.json").read_text())
    assert saved["lead_weight"] == 8


def test_outcome_lines_are_the_first_output_line_of_each_target(embedded_model_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    tok = transformers.AutoTokenizer.from_pretrained(str(embedded_model_path))
    turns = [
        ("cat a.txt", "cat: a.txt: No such file or directory"),
        ("ls", "$ ls\nb.txt\nc.txt"),
        ("cd /tmp", "$ cd /tmp"),
        ("touch x", ""),
    ]
    traj = Trajectory(
        domain="terminal",
        system_prompt="x",
        turns=[{"action": a, "observation": o} for a, o in turns],
    )
    mcp = Trajectory(
        domain="mcp",
        system_prompt="x",
        turns=[
            {
                "action": {"name": "write_file", "arguments": {"path": "/r/a.md"}},
                "observation": "Error: ENOENT: no such file\nat open",
            }
        ],
    )
    expected = {
        "terminal": ["cat: a.txt: No such file or directory<|im_end|>", "b.txt\n"]
        + ["<|im_end|>"] * 2,
        "mcp": ["Error: ENOENT: no such file\n"],
    }
    for t in (traj, mcp):
        messages = history_messages(t)
        targets = tuple(i for i, m in enumerate(messages) if m["role"] == "assistant")
        sample = ChatSample("k", messages, targets, (TurnClass.ACTION,) * len(targets))
        enc = encode_sample(tok, sample, 4096)
        assert enc is not None
        got = [tok.decode(enc.input_ids[a:b]) for a, b in enc.lead]
        assert got == expected[t.domain.value]
        assert all(enc.labels[k] != -100 for a, b in enc.lead for k in range(a, b))


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
        "from aw_lookahead.training.classify import ClassifyConfig\n"
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
