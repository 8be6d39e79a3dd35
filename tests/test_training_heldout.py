"""The held-out track (best evaluation, patience, resume) and the options that switch it on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aw_lookahead.errors import ConfigError
from aw_lookahead.training import TrainConfig
from aw_lookahead.training.data import EncodedSample
from aw_lookahead.training.heldout import HeldOutTrack, heldout_subset

DATA = Path(__file__).resolve().parents[1] / "examples" / "data" / "terminal_trajectories.jsonl"


def test_the_best_evaluation_needs_to_beat_the_last_best_by_the_delta() -> None:
    track = HeldOutTrack(metric="loss", min_delta=0.05)
    assert track.add(10, 1.00, 2.0) is True
    assert track.add(20, 0.97, 1.0) is False  # lower, but not by the delta
    assert (track.best_step, track.since_best) == (10, 1)
    assert track.add(30, 0.90, 3.0) is True
    assert (track.best_step, track.best_value, track.since_best) == (30, 0.90, 0)
    assert track.add(40, 0.95, 0.5) is False
    assert track.add(50, 0.91, 0.4) is False
    assert track.since_best == 2
    assert track.series() == [(10, 1.0), (20, 0.97), (30, 0.9), (40, 0.95), (50, 0.91)]


def test_the_outcome_line_metric_ranks_by_lead_loss_and_skips_missing_values() -> None:
    track = HeldOutTrack(metric="lead_loss")
    assert track.add(1, 0.5, None) is False
    assert track.since_best == 1
    assert track.add(2, 0.9, 2.0) is True
    assert track.add(3, 0.1, 2.5) is False  # the plain loss does not count here
    assert (track.best_step, track.since_best) == (2, 1)
    assert track.series() == [(2, 2.0), (3, 2.5)]


def test_a_resumed_track_replays_its_history_under_the_run_s_rule() -> None:
    track = HeldOutTrack(metric="loss")
    for step, value in ((5, 1.0), (10, 0.8), (15, 0.85)):
        track.add(step, value, value + 1)
    same = HeldOutTrack.from_state(track.to_state(), "loss", 0.0)
    assert (same.best_step, same.best_value, same.since_best) == (10, 0.8, 1)
    assert same.history == track.history
    by_lead = HeldOutTrack.from_state(track.to_state(), "lead_loss", 0.5)
    assert (by_lead.best_step, by_lead.since_best) == (5, 2)
    assert HeldOutTrack.from_state(None, "loss", 0.0).history == []


def test_the_heldout_subset_is_a_fixed_seeded_spread() -> None:
    samples = [EncodedSample(f"s{i}", [1, 2], [1, 2]) for i in range(50)]
    picked = heldout_subset(samples, 10, seed=3)
    assert len(picked) == 10
    assert picked == heldout_subset(samples, 10, seed=3)
    assert [s.key for s in picked] == sorted((s.key for s in picked), key=lambda k: int(k[1:]))
    assert picked != heldout_subset(samples, 10, seed=4)
    assert heldout_subset(samples, None, seed=3) == samples
    assert heldout_subset(samples[:5], 10, seed=3) == samples[:5]


def test_heldout_options_are_checked_up_front(embedded_model_path: Path, tmp_path: Path) -> None:
    def config(**kw: object) -> TrainConfig:
        return TrainConfig(model=embedded_model_path, data=[DATA], out=tmp_path, **kw)  # type: ignore[arg-type]

    with pytest.raises(ConfigError, match="--early-stop needs held-out data"):
        config(early_stop=3)
    with pytest.raises(ConfigError, match="--eval-on-start needs held-out data"):
        config(eval_on_start=True)
    with pytest.raises(ConfigError, match=r"missing\.jsonl does not exist \(--eval-data\)"):
        config(eval_data=[tmp_path / "missing.jsonl"])
    with pytest.raises(ConfigError, match="eval_every must be >= 1"):
        config(eval_data=[DATA], eval_every=0)
    with pytest.raises(ConfigError, match="eval_metric must be loss or lead_loss"):
        config(eval_data=[DATA], eval_metric="accuracy")
    with pytest.raises(ConfigError, match="early_stop_delta must be >= 0"):
        config(eval_data=[DATA], early_stop=2, early_stop_delta=-1)
    cfg = config(eval_data=[DATA], save_every=25)
    assert cfg.evaluation_interval == 25
    assert config(eval_data=[DATA], save_every=25, eval_every=100).evaluation_interval == 100


def test_grpo_refuses_heldout_data_with_a_clear_error(
    embedded_model_path: Path, tmp_path: Path
) -> None:
    code = "import sys; from aw_lookahead.cli import main; sys.exit(main(sys.argv[1:]))"
    args = ["train", "--method", "grpo", "--model", str(embedded_model_path), "--data", str(DATA)]
    args += ["--out", str(tmp_path / "run"), "--eval-data", str(DATA)]
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "--eval-data scores SFT runs" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()
