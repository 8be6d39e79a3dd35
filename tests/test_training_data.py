"""Rendering and loss labels, checked token by token against the real SmolLM2 tokenizer."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.agentworldbench import sample_to_record
from aw_lookahead.errors import ConfigError
from aw_lookahead.prompts import render_messages
from aw_lookahead.prompts.contract import render_observation
from aw_lookahead.training.classify import ClassifyConfig, TurnClass
from aw_lookahead.training.data import (
    IGNORE_INDEX,
    DataReport,
    build_samples,
    encode_sample,
    prepare_dataset,
    read_training_records,
    target_answer,
)
from aw_lookahead.trajectory import Trajectory, TurnSample

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DATA = Path(__file__).resolve().parents[1] / "examples" / "data" / "terminal_trajectories.jsonl"
KEEP_ALL = ClassifyConfig(keep_ratios={c: 1.0 for c in TurnClass})


@pytest.fixture(scope="module")
def tokenizer(embedded_model_path: Path) -> Any:
    transformers = pytest.importorskip("transformers")
    return transformers.AutoTokenizer.from_pretrained(str(embedded_model_path))


def _traj() -> Trajectory:
    return Trajectory(
        domain="terminal",
        task="Inspect the project",
        id="t1",
        turns=[
            {"action": "ls", "observation": "README.md  src  tests"},
            {"action": "echo hi there", "observation": "hi there"},
            {"action": "wc -l README.md", "observation": "42 README.md"},
        ],
    )


def _runs(labels: list[int]) -> list[tuple[int, int]]:
    """Maximal runs [start, end) of labelled positions."""
    runs, start = [], None
    for i, x in enumerate([*labels, IGNORE_INDEX]):
        if x != IGNORE_INDEX and start is None:
            start = i
        elif x == IGNORE_INDEX and start is not None:
            runs.append((start, i))
            start = None
    return runs


def _expected_ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text + "<|im_end|>", add_special_tokens=False)["input_ids"])


def test_each_mode_matches_inference_and_labels_only_the_answer(tokenizer: Any) -> None:
    traj = _traj()
    samples = list(build_samples([("t1", traj)], targets="each", config=KEEP_ALL))
    assert [s.key for s in samples] == ["t1#1", "t1#2", "t1#3"]
    header = list(tokenizer("<|im_start|>assistant\n", add_special_tokens=False)["input_ids"])
    for k, sample in enumerate(samples):
        # The prompt part is byte for byte what the client sends for this action.
        assert sample.messages[:-1] == render_messages(traj.prefix(k), traj.turns[k].action)
        enc = encode_sample(tokenizer, sample, 4096)
        assert enc is not None
        full = tokenizer.apply_chat_template(sample.messages, tokenize=False)
        assert enc.input_ids == list(tokenizer(full, add_special_tokens=False)["input_ids"])
        expected = _expected_ids(tokenizer, target_answer(traj.turns[k].observation))
        ((start, end),) = _runs(enc.labels)
        # Token by token: labels equal the ids inside the answer, -100 everywhere else.
        assert enc.labels[start:end] == enc.input_ids[start:end] == expected
        assert all(x == IGNORE_INDEX for x in enc.labels[:start] + enc.labels[end:])
        assert enc.input_ids[start - len(header) : start] == header
        assert end == len(enc.input_ids) - 1  # only the template's final newline follows


def test_all_mode_labels_kept_turns_and_keeps_masked_ones_in_context(tokenizer: Any) -> None:
    traj = _traj()
    cfg = ClassifyConfig(keep_ratios={"echo": 0.0})
    samples = list(build_samples([("t1", traj)], targets="all", config=cfg))
    assert len(samples) == 1
    sample = samples[0]
    assert sample.target_classes == (TurnClass.ACTION, TurnClass.ACTION)
    enc = encode_sample(tokenizer, sample, 4096)
    assert enc is not None
    runs = _runs(enc.labels)
    assert len(runs) == 2
    for (start, end), turn in zip(runs, (traj.turns[0], traj.turns[2]), strict=True):
        expected = _expected_ids(tokenizer, render_observation(turn.observation))
        assert enc.labels[start:end] == expected
    text = tokenizer.decode(enc.input_ids)
    assert render_observation("hi there") in text  # the masked echo turn stays in the input
    labelled = tokenizer.decode([x for x in enc.labels if x != IGNORE_INDEX])
    assert "hi there" not in labelled
    assert sum(x != IGNORE_INDEX for x in enc.labels) == sum(e - s for s, e in runs)


def test_gemma_turns_give_a_base_without_a_template_trainable_labels(tokenizer: Any) -> None:
    """A registry base with no chat template of its own (Gemma 3 270M) is trained with
    ``GEMMA_TURNS``: it must render prefix by prefix (else no label span can be found),
    fold the system prompt into the first user turn, and label each answer through
    ``<end_of_turn>``, the token llama.cpp stops at."""
    from aw_lookahead.embedded.bases import GEMMA_TURNS, REGISTRY_BASES

    assert REGISTRY_BASES["gemma-3-270m"].chat_template == GEMMA_TURNS
    gemma = copy.deepcopy(tokenizer)
    gemma.chat_template = GEMMA_TURNS
    traj = _traj()
    (sample,) = build_samples([("t1", traj)], targets="all", config=KEEP_ALL)
    enc = encode_sample(gemma, sample, 4096)
    assert enc is not None
    text = gemma.decode(enc.input_ids)
    system = sample.messages[0]["content"]
    assert text.startswith(f"{gemma.bos_token}<start_of_turn>user\n{system}\n\n")
    assert text.count(system) == 1
    labelled = [gemma.decode(enc.input_ids[start:end]) for start, end in _runs(enc.labels)]
    assert labelled == [
        render_observation(turn.observation) + "<end_of_turn>" for turn in traj.turns
    ]


def test_one_mode_picks_one_kept_turn_per_trajectory_deterministically() -> None:
    records = [(f"t{i}", _traj()) for i in range(20)]
    picks = [s.key for s in build_samples(records, targets="one", config=KEEP_ALL)]
    assert len(picks) == 20
    assert picks == [s.key for s in build_samples(records, targets="one", config=KEEP_ALL)]
    assert len({p.split("#")[1] for p in picks}) > 1  # not always the same turn


def test_retries_leave_the_sequence_but_state_stays_continuous() -> None:
    fail = "bash: ./run: Permission denied"
    traj = Trajectory(
        domain="terminal",
        turns=[
            {"action": "./run", "observation": fail},
            {"action": "./run", "observation": fail},
            {"action": "chmod +x run", "observation": "changed mode of run"},
        ],
    )
    report = DataReport()
    (sample,) = build_samples([("r", traj)], targets="all", config=KEEP_ALL, report=report)
    users = [m["content"] for m in sample.messages if m["role"] == "user"]
    assert len(users) == 2
    assert "./run" in users[0]
    assert "chmod" in users[1]
    assert report.retries_skipped == 1


def test_long_single_target_samples_drop_old_turns_like_inference(tokenizer: Any) -> None:
    turns = [{"action": f"cat part{i}.txt", "observation": f"part {i} " * 60} for i in range(6)]
    traj = Trajectory(domain="terminal", task="read", turns=turns)
    *_, last = build_samples([("long", traj)], targets="each", config=KEEP_ALL)
    enc_full = encode_sample(tokenizer, last, 100_000)
    assert enc_full is not None
    enc = encode_sample(tokenizer, last, len(enc_full.input_ids) - 50)
    assert enc is not None
    assert enc.trimmed_turns >= 1
    assert not enc.truncated
    ((start, end),) = _runs(enc.labels)
    expected = _expected_ids(tokenizer, target_answer(turns[-1]["observation"]))
    assert enc.labels[start:end] == expected


def test_agentworldbench_records_keep_their_verbatim_prompt(tokenizer: Any, tmp_path: Path) -> None:
    traj = _traj()
    record = sample_to_record(TurnSample(trajectory=traj, turn_idx=3, id="awb-1"))
    path = tmp_path / "awb.jsonl"
    import json

    path.write_text(json.dumps(record) + "\n")
    [(key, rec)] = list(read_training_records([path]))
    assert key == "awb-1"
    assert isinstance(rec, TurnSample)
    (sample,) = build_samples([(key, rec)], config=KEEP_ALL)
    assert sample.messages[-1] == {"role": "assistant", "content": target_answer("42 README.md")}
    assert sample.messages[-2]["content"] == record["prompt"][2]


def test_prepare_dataset_on_the_generated_terminal_data(tokenizer: Any) -> None:
    samples, report = prepare_dataset([DATA], tokenizer, max_len=4096, targets="each")
    assert samples
    assert report.trajectories == sum(1 for line in DATA.read_text().splitlines() if line.strip())
    assert sum(report.class_turns.values()) == report.turns - report.retries_skipped
    assert report.samples == len(samples) == sum(report.class_kept.values())
    assert report.label_tokens == sum(s.n_label_tokens for s in samples)
    assert report.label_tokens == sum(report.class_label_tokens.values())
    assert 0.5 < report.masked_share < 1.0
    assert "label tokens" in report.summary()


def test_bad_mode_and_bad_record(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"'all', 'each' or 'one'"):
        list(build_samples([("t", _traj())], targets="some"))  # type: ignore[arg-type]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"foo": 1}\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:1"):
        list(read_training_records([bad]))


def _report_only(model: Path, keep: str, *extra: str) -> int:
    from aw_lookahead.cli import main

    args = ["train", "--model", str(model), "--data", str(DATA), "--out", "unused"]
    return main([*args, "--report-only", "--keep", keep, *extra])


def test_cli_report_only_prints_the_class_table(
    embedded_model_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _report_only(embedded_model_path, "echo=1", "--max-len", "4096")
    assert code == 0
    out = capsys.readouterr().out
    assert "label tokens" in out
    assert '"masked_share"' in out
    assert _report_only(embedded_model_path, "chatter=1") == 2
