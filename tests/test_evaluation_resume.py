"""``eval run`` resumes only its own run: never appends to another model's, protocol's or data
set's file unless told to (``append``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from aw_lookahead.errors import UsageError
from aw_lookahead.evaluation.records import PREDICTIONS_FILE, unique_ids
from aw_lookahead.evaluation.runner import predict_samples
from aw_lookahead.trajectory import Action, Trajectory, Turn, TurnSample
from aw_lookahead.worldmodel import FunctionWorldModel


def _samples() -> list[TurnSample]:
    traj = Trajectory(
        domain="terminal",
        task="list",
        turns=[Turn(action="ls", observation="a\n"), Turn(action="pwd", observation="/w\n")],
    )
    return [TurnSample(trajectory=traj, turn_idx=i) for i in (1, 2)]


def _model(name: str) -> FunctionWorldModel:
    def predict(trajectory: Trajectory, action: Action) -> str:
        return f"{name} says hi\n"

    return FunctionWorldModel(predict, model_id=name)


def _run(model: FunctionWorldModel, out: Path, *, resume: bool = True) -> int:
    stats = asyncio.run(predict_samples(_samples(), model, out, progress=False, resume=resume))
    return stats.ok


def test_resume_into_another_models_run_is_refused_and_keeps_the_file(tmp_path: Path) -> None:
    assert _run(_model("model-a"), tmp_path) == 2
    before = (tmp_path / PREDICTIONS_FILE).read_bytes()
    with pytest.raises(UsageError, match="holds predictions of model 'model-a', this run uses"):
        _run(_model("model-b"), tmp_path)
    assert (tmp_path / PREDICTIONS_FILE).read_bytes() == before
    assert _run(_model("model-a"), tmp_path) == 0  # the same run resumes: nothing left to do
    assert _run(_model("model-b"), tmp_path, resume=False) == 2  # --no-resume replaces


def test_a_file_that_is_not_a_run_is_never_appended_to(tmp_path: Path) -> None:
    (tmp_path / PREDICTIONS_FILE).write_text('{"name": "my notes"}\n')
    with pytest.raises(UsageError, match="holds no prediction record"):
        _run(_model("model-a"), tmp_path)
    assert (tmp_path / PREDICTIONS_FILE).read_text() == '{"name": "my notes"}\n'


def test_a_run_of_other_inputs_is_refused_unless_appended(tmp_path: Path) -> None:
    model = _model("model-a")
    assert _run(model, tmp_path) == 2
    before = (tmp_path / PREDICTIONS_FILE).read_bytes()
    other = Trajectory(
        id="another-set", domain="terminal", turns=[Turn(action="id", observation="uid=0\n")]
    )
    others = [TurnSample(trajectory=other, turn_idx=1)]
    with pytest.raises(UsageError, match=r"predictions.jsonl:1 holds a prediction for id"):
        asyncio.run(predict_samples(others, model, tmp_path, progress=False))
    assert (tmp_path / PREDICTIONS_FILE).read_bytes() == before
    stats = asyncio.run(predict_samples(others, model, tmp_path, progress=False, append=True))
    assert stats.ok == 1


def test_a_shorter_run_of_the_same_inputs_resumes(tmp_path: Path) -> None:
    """``--limit 1`` after a full run: the file's other ids are in the data, not foreign."""
    model = _model("model-a")
    assert _run(model, tmp_path) == 2
    first = _samples()[:1]
    with pytest.raises(UsageError, match="which --data does not have"):
        asyncio.run(predict_samples(first, model, tmp_path, progress=False))
    every = dict(zip(unique_ids(_samples()), _samples(), strict=True))
    stats = asyncio.run(predict_samples(first, model, tmp_path, progress=False, inputs=every))
    assert (stats.ok, stats.skipped) == (0, 1)
