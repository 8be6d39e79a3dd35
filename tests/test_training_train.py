"""Training with the real SmolLM2-135M on CPU: loss masking, a LoRA run served by vLLM, resume.

Sequences are kept short (a one-line system prompt travels inside the test
trajectories, so training and the client render the same messages) to fit
the 2-core budget.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.prompts import history_messages
from aw_lookahead.training.classify import TurnClass
from aw_lookahead.training.data import ChatSample, encode_sample
from aw_lookahead.trajectory import Trajectory, read_trajectories, write_trajectories
from lora_support import served_lora

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

DATA = Path(__file__).resolve().parents[1] / "examples" / "data" / "terminal_trajectories.jsonl"
SHORT_SYSTEM = "You simulate a Linux terminal. Reply with the exact output of each command."


def _short_data(path: Path, n: int) -> list[Trajectory]:
    trajs = [t.model_copy(update={"system_prompt": SHORT_SYSTEM}) for t in read_trajectories(DATA)]
    chosen = trajs[:n]
    write_trajectories(path, chosen)
    return chosen


def _cli(*args: str, timeout: float = 400) -> subprocess.CompletedProcess[str]:
    code = "import sys; from aw_lookahead.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _losses(out: Path) -> list[float]:
    lines = (out / "metrics.jsonl").read_text().splitlines()
    return [json.loads(line)["loss"] for line in lines if line.strip()]


# ----------------------------------------------------------------------------- masking


@pytest.fixture(scope="module")
def model_and_tokenizer(embedded_model_path: Path) -> tuple[Any, Any]:
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    tok = transformers.AutoTokenizer.from_pretrained(str(embedded_model_path))
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(embedded_model_path), dtype=torch.float32
    )
    model.eval()
    return model, tok


def test_masked_turns_contribute_zero_loss(model_and_tokenizer: tuple[Any, Any]) -> None:
    torch = pytest.importorskip("torch")
    from aw_lookahead.training.batches import collate

    model, tok = model_and_tokenizer
    traj = Trajectory(
        domain="terminal",
        system_prompt=SHORT_SYSTEM,
        turns=[
            {"action": "cat greeting.txt", "observation": "good morning, terminal friends"},
            {"action": "cat farewell.txt", "observation": "see you tomorrow, dear shell"},
        ],
    )
    messages = history_messages(traj)
    kept_msg, masked_msg = 2, 4  # system, user, ASSISTANT(kept), user, ASSISTANT(masked)
    sample = ChatSample("m", messages, (kept_msg,), (TurnClass.ACTION,))
    enc = encode_sample(tok, sample, 4096)
    probe = encode_sample(tok, ChatSample("p", messages, (masked_msg,), (TurnClass.ECHO,)), 4096)
    assert enc is not None
    assert probe is not None
    masked_pos = [i for i, x in enumerate(probe.labels) if x != -100][:-1]  # obs, not <|im_end|>
    kept_pos = [i for i, x in enumerate(enc.labels) if x != -100][:-1]
    assert masked_pos
    assert kept_pos
    assert all(enc.labels[i] == -100 for i in masked_pos)
    other = tok(" zebra", add_special_tokens=False)["input_ids"][0]

    def loss(ids: list[int], labels: list[int]) -> float:
        batch = collate(torch, [type(enc)("x", ids, labels)], 0, "cpu")
        with torch.no_grad():
            return float(model(**batch).loss)

    base = loss(enc.input_ids, enc.labels)
    ids = list(enc.input_ids)
    for i in masked_pos:
        ids[i] = other
    assert ids != enc.input_ids
    assert loss(ids, enc.labels) == pytest.approx(base, abs=1e-6)

    ids = list(enc.input_ids)
    labels = list(enc.labels)
    for i in kept_pos:
        ids[i] = other
        labels[i] = other
    assert abs(loss(ids, labels) - base) > 1e-2


# ----------------------------------------------------------------------------- LoRA run + serving


def test_lora_run_lowers_loss_and_vllm_serves_the_adapter(
    tmp_path: Path, vllm_server: Any, embedded_model_path: Path
) -> None:
    data = tmp_path / "short.jsonl"
    trajs = _short_data(data, 1)
    out = tmp_path / "run"
    done = _cli(
        "train",
        "--model",
        str(embedded_model_path),
        "--data",
        str(data),
        "--out",
        str(out),
        "--targets",
        "one",
        "--max-len",
        "512",
        "--max-steps",
        "6",
        "--lr",
        "2e-3",
        "--scheduler",
        "constant",
        "--lora-r",
        "8",
        "--lora-alpha",
        "16",
        "--save-every",
        "3",
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    losses = _losses(out)
    assert len(losses) == 6
    assert sum(losses[-3:]) / 3 < losses[0]
    assert losses[-1] < 0.8 * losses[0]
    adapter = out / "adapter"
    assert (adapter / "adapter_config.json").is_file()
    assert (adapter / "adapter_model.safetensors").is_file()
    assert (out / "loss.png").stat().st_size > 1000
    result = json.loads((out / "train_result.json").read_text())
    assert result["finished"] is True
    assert result["output_dir"] == str(adapter)

    with served_lora(vllm_server, adapter, "awl-test") as name:
        import asyncio

        from aw_lookahead.worldmodel import OpenAIWorldModel

        async def ask() -> Any:
            async with OpenAIWorldModel(
                model=name,
                base_url=vllm_server.base_url,
                api_key=vllm_server.api_key,
                max_tokens=48,
                temperature=0.0,
                top_k=None,
                timeout=180,
            ) as wm:
                served = [m.id for m in await wm.list_models()]
                assert name in served
                t = trajs[0]
                return await wm.predict(t.prefix(1), t.turns[1].action)

        pred = asyncio.run(ask())
        assert pred.model == name
        assert pred.raw


# ----------------------------------------------------------------------------- resume


def test_stopped_run_resumes_at_its_checkpoint_and_matches_an_uninterrupted_run(
    tmp_path: Path, embedded_model_path: Path
) -> None:
    data = tmp_path / "tiny.jsonl"
    _short_data(data, 2)
    common = [
        "--model",
        str(embedded_model_path),
        "--data",
        str(data),
        "--targets",
        "one",
        "--max-len",
        "512",
        "--max-steps",
        "3",
        "--save-every",
        "1",
        "--lr",
        "1e-3",
        "--lora-r",
        "4",
        "--lora-alpha",
        "8",
        "--no-progress",
        "--no-gradient-checkpointing",
    ]
    stopped = tmp_path / "stopped"
    first = _cli("train", *common, "--out", str(stopped), "--stop-after", "1")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "continue with --resume" in first.stdout
    assert not (stopped / "adapter").exists()
    assert (stopped / "checkpoints" / "step-1" / "trainer_state.json").is_file()
    again = _cli("train", *common, "--out", str(stopped))
    assert again.returncode == 2
    assert "--resume" in again.stderr
    resumed = _cli("train", *common, "--out", str(stopped), "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    state = json.loads((stopped / "train_result.json").read_text())
    assert state["resumed_from"] == 1
    assert state["step"] == 3
    assert state["cached_data"] is True  # tokenised once, by the first slice
    assert (stopped / "adapter" / "adapter_model.safetensors").is_file()
    assert (stopped / "checkpoints" / "step-3" / "adapter" / "adapter_model.safetensors").is_file()

    straight = tmp_path / "straight"
    full = _cli("train", *common, "--out", str(straight))
    assert full.returncode == 0, full.stderr[-3000:]
    assert _losses(stopped) == pytest.approx(_losses(straight), rel=1e-3)

    # a warm start from the finished adapter begins where it ended, with the adapter's shape
    warm = tmp_path / "warm"
    init = ["--init-adapter", str(straight / "adapter")]
    values = {"--lora-r": "16", "--lora-alpha": "32", "--max-steps": "1"}
    widened = [values.get(common[i - 1], a) if i else a for i, a in enumerate(common)]
    start = _cli("train", *widened, *init, "--out", str(warm))
    assert start.returncode == 0, start.stderr[-3000:]
    assert _losses(warm)[0] < _losses(straight)[0] - 0.05
    shape = json.loads((warm / "adapter" / "adapter_config.json").read_text())
    assert shape["r"] == 4
    assert json.loads((warm / "train_result.json").read_text())["init_adapter"] == init[1]


# ----------------------------------------------------------------------------- held-out evaluation


def _held_out_data(path: Path, first: int, n: int) -> None:
    trajs = [t.model_copy(update={"system_prompt": SHORT_SYSTEM}) for t in read_trajectories(DATA)]
    write_trajectories(path, trajs[first : first + n])


def test_heldout_loss_is_scored_and_the_best_adapter_kept(
    tmp_path: Path, embedded_model_path: Path
) -> None:
    peft = pytest.importorskip("peft")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from aw_lookahead.training.batches import collate
    from aw_lookahead.training.classify import ClassifyConfig
    from aw_lookahead.training.config import train_prompts
    from aw_lookahead.training.dataset_cache import HELDOUT_FILE, load_or_prepare

    data, held = tmp_path / "train.jsonl", tmp_path / "held.jsonl"
    _short_data(data, 2)
    _held_out_data(held, 2, 1)
    out = tmp_path / "run"
    # fmt: off
    done = _cli(
        "train", "--model", str(embedded_model_path), "--data", str(data),
        "--eval-data", str(held), "--eval-every", "1", "--out", str(out),
        "--targets", "one", "--max-len", "512", "--max-steps", "3", "--lr", "2e-3",
        "--lora-r", "4", "--lora-alpha", "8", "--save-every", "5", "--keep-checkpoints", "3",
        "--no-progress", "--no-gradient-checkpointing",
    )
    # fmt: on
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    scored = [(r["step"], r["eval_loss"]) for r in rows if "eval_loss" in r]
    assert [s for s, _ in scored] == [1, 2, 3]  # each evaluation a checkpoint, too
    assert all(v > 0 for _, v in scored)
    assert len({round(v, 6) for _, v in scored}) == 3  # the weights moved between evaluations
    best_step = min(scored, key=lambda sv: sv[1])[0]
    result = json.loads((out / "train_result.json").read_text())["heldout"]
    assert result["best_step"] == best_step
    assert result["stopped_early"] is False
    kept = out / "checkpoints" / f"step-{best_step}" / "adapter" / "adapter_model.safetensors"
    assert (out / "best-adapter" / "adapter_model.safetensors").read_bytes() == kept.read_bytes()
    assert f"best {dict(scored)[best_step]:.4f} at step {best_step}" in done.stdout

    # the last evaluation is the final adapter's mean loss on the held-out sequence,
    # recomputed here by transformers' own loss
    tok = transformers.AutoTokenizer.from_pretrained(str(embedded_model_path))
    (sample,), _, _ = load_or_prepare(
        tmp_path / "recheck",
        [held],
        tok,
        max_len=512,
        targets="one",
        config=ClassifyConfig.parse_ratios([], skip_retries=True, seed=0),
        prompts=train_prompts(embedded_model_path, "auto", None),
        file_name=HELDOUT_FILE,
    )
    base = transformers.AutoModelForCausalLM.from_pretrained(
        str(embedded_model_path), dtype=torch.float32
    )
    model = peft.PeftModel.from_pretrained(base, str(out / "adapter")).eval()
    with torch.no_grad():
        expected = float(model(**collate(torch, [sample], 0, "cpu")).loss)
    assert scored[-1][1] == pytest.approx(expected, rel=1e-3)


def _stalled_run(tmp_path: Path, model: Path, *extra: str) -> tuple[Path, list[str]]:
    """A run folder and the arguments of a run that cannot improve its held-out loss: a
    learning rate too small to move it by the required 0.01, an evaluation every step,
    stopping after one without improvement."""
    data, held = tmp_path / "train.jsonl", tmp_path / "held.jsonl"
    _short_data(data, 2)
    _held_out_data(held, 2, 2)
    out = tmp_path / "run"
    # fmt: off
    args = [
        "train", "--model", str(model), "--data", str(data), "--eval-data", str(held),
        "--eval-every", "1", "--early-stop", "1", "--early-stop-delta", "0.01",
        "--out", str(out), "--targets", "one", "--max-len", "512", "--lr", "1e-9",
        "--save-every", "5", "--no-progress", "--no-gradient-checkpointing", *extra,
    ]
    # fmt: on
    return out, args


def test_run_stops_early_when_the_heldout_loss_stops_improving(
    tmp_path: Path, embedded_model_path: Path
) -> None:
    out, common = _stalled_run(
        tmp_path, embedded_model_path, "--max-steps", "6", "--lora-r", "4", "--lora-alpha", "8"
    )
    done = _cli(*common)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "stopped early at step 2" in done.stdout
    result = json.loads((out / "train_result.json").read_text())
    assert result["step"] == 2
    assert result["finished"] is True
    assert result["heldout"]["stopped_early"] is True
    assert result["heldout"]["best_step"] == 1
    assert (out / "adapter" / "adapter_model.safetensors").is_file()
    assert (out / "best-adapter" / "adapter_model.safetensors").is_file()

    again = _cli(*common, "--resume")  # a stopped run stays stopped
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads((out / "train_result.json").read_text())["step"] == 2
    assert len(_losses(out)) == 2


def test_eval_on_start_scores_a_warm_start_that_training_does_not_beat(
    tmp_path: Path, embedded_model_path: Path
) -> None:
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    from aw_lookahead.embedded.lora import PACKAGED_ADAPTER_DIR

    # from the shipped adapter, which a run that cannot improve never beats
    out, common = _stalled_run(
        tmp_path,
        embedded_model_path,
        "--init-adapter",
        str(PACKAGED_ADAPTER_DIR),
        "--eval-on-start",
        "--max-steps",
        "4",
    )
    done = _cli(*common)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert rows[0]["step"] == 0
    assert rows[0]["loss"] is None
    assert rows[0]["eval_loss"] > 0
    result = json.loads((out / "train_result.json").read_text())
    assert [e["step"] for e in result["heldout"]["evaluations"]] == [0, 1]
    assert result["heldout"]["best_step"] == 0
    assert result["heldout"]["stopped_early"] is True
    assert result["step"] == 1
    assert f"best {rows[0]['eval_loss']:.4f} at step 0" in done.stdout
    # the best adapter is the warm start itself
    best = load_file(str(out / "best-adapter" / "adapter_model.safetensors"))
    start = load_file(str(PACKAGED_ADAPTER_DIR / "adapter_model.safetensors"))
    assert best.keys() == start.keys()
    assert all(torch.equal(best[k].float(), start[k].float()) for k in start)

    again = _cli(*common, "--resume")  # the step-0 score survives a resume and is not redone
    assert again.returncode == 0, again.stderr[-3000:]
    rows_again = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert rows_again[0] == rows[0]
    evaluations = json.loads((out / "train_result.json").read_text())["heldout"]["evaluations"]
    assert [e["step"] for e in evaluations] == [0, 1]
