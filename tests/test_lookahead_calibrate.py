"""``eval calibrate`` for real: the embedded model on a few actions with known outcomes, and the
gate reading the file it writes; sampled confidence is reproducible for identical inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aw_lookahead.cli import main
from aw_lookahead.lookahead import DecisionKind, Lookahead
from aw_lookahead.lookahead.calibration import load_calibration
from aw_lookahead.trajectory import Trajectory, write_trajectories
from aw_lookahead.worldmodel import OpenAIWorldModel

OUTCOMES = [
    ("cat notes.txt", "$ cat notes.txt\nbuy milk\n"),
    ("cat missing.txt", "$ cat missing.txt\ncat: missing.txt: No such file or directory\n"),
    ("ls", "$ ls\nnotes.txt\n"),
    ("gti status", "$ gti status\nbash: gti: command not found\n"),
    ("echo done", "$ echo done\ndone\n"),
    ("python3 -c 'import nosuchmod'", "$ python3 -c 'import nosuchmod'\nTraceback (most recent "
     "call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module "
     "named 'nosuchmod'\n"),
]  # fmt: skip


def _data(tmp_path: Path) -> Path:
    traj = Trajectory(domain="terminal", task="look at the notes", id="known")
    for action, observation in OUTCOMES:
        traj = traj.with_turn(action, observation)
    path = tmp_path / "validation.jsonl"
    write_trajectories(path, [traj])
    return path


def test_calibrate_writes_a_file_the_gate_uses(
    vllm_server: Any, tmp_path: Path, capsys: Any
) -> None:
    out = tmp_path / "cal" / "model.json"
    rc = main(
        [
            "eval", "calibrate", "--data", str(_data(tmp_path)), "--budget", "0.5",
            "--max-tokens", "24", "--concurrency", "3", "--timeout", "600",
            "--base-url", vllm_server.base_url, "--model", vllm_server.model,
            "--out", str(out), "--json",
        ]
    )  # fmt: skip
    assert rc == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    cal = load_calibration(out)
    assert (cal.model, cal.budget, cal.estimator) == (vllm_server.model, 0.5, "logprobs")
    assert (cal.predictions_per_action, cal.temperature) == (1, 0.0)
    assert (cal.failing, cal.good) == (3, 3), "the truth is the judges' reading of the real output"
    assert summary["threshold"] == cal.threshold
    if cal.threshold is not None:
        at = next(p for p in cal.curve if p.threshold == cal.threshold)
        assert at.false_veto_rate <= 0.5
        assert (cal.catch_rate, cal.false_veto_rate) == (at.catch_rate, at.false_veto_rate)
    rows = [json.loads(line) for line in out.with_suffix(".samples.jsonl").read_text().splitlines()]
    assert len(rows) == len(OUTCOMES)
    groups = {r["id"].rsplit("#", 1)[1]: r["group"] for r in rows}
    assert groups["1"] == groups["3"] == "terminal/read-only", "cat and ls: the router's reads"
    assert groups["6"] == "terminal/may-change", "python3 -c may change anything"
    assert all(0.0 <= r["p_failure"] <= 1.0 for r in rows if r["p_failure"] is not None)
    assert out.with_suffix(".png").stat().st_size > 1000
    wm = OpenAIWorldModel(vllm_server.model, base_url=vllm_server.base_url, max_tokens=24)
    lk = Lookahead(wm, calibration=out)
    assert lk.veto_threshold.source == "calibration"
    assert lk.veto_threshold.value == cal.threshold


async def test_confidence_is_the_same_for_the_same_inputs(vllm_server: Any) -> None:
    """Greedy predictions with token log-probabilities: the same p_failure and verdict twice."""
    wm = OpenAIWorldModel(
        vllm_server.model,
        base_url=vllm_server.base_url,
        max_tokens=24,
        temperature=0.0,
        logprobs=True,
        timeout=600,
    )
    traj = Trajectory(domain="terminal", task="read the notes").with_turn("ls", "notes.txt")
    runs = []
    for _ in range(2):
        lk = Lookahead(wm, cache=False, calibration=False, threshold=0.5)
        runs.append(await lk.gate(traj, ["cat missing.txt", "cat notes.txt"]))
    first, second = runs
    assert [d.predictions for d in first] == [1, 1]
    assert all(d.p_failure is not None and 0.0 <= d.p_failure <= 1.0 for d in first)
    assert [(d.kind, d.p_failure) for d in first] == [(d.kind, d.p_failure) for d in second]
    for d in first:
        assert d.prediction is not None
        assert "token_logprobs" in d.prediction.metadata
        assert d.kind is DecisionKind.VETO or d.uncertain or d.p_failure == 0.0


async def test_samples_come_back_with_the_prediction(vllm_server: Any) -> None:
    wm = OpenAIWorldModel(
        vllm_server.model, base_url=vllm_server.base_url, max_tokens=16, samples=3, timeout=600
    )
    lk = Lookahead(wm, cache=False, calibration=False)
    [d] = await lk.gate(Trajectory(domain="terminal"), ["cat missing.txt"])
    assert d.prediction is not None
    assert d.predictions == 1 + len(d.prediction.samples) <= 3
    assert d.p_failure is not None
