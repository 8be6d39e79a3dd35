"""The hidden-state probe bench: its threshold, rates and fit do what its numbers claim.

Its numbers go into the model card, so the arithmetic is checked on rows whose
answers are known.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from heldout_gate import auc
from hidden_state_probe import _fit, _rates, _threshold


def test_the_threshold_keeps_false_vetoes_within_the_budget() -> None:
    failed = [True, True, True] + [False] * 20
    scores = [0.95, 0.5, 0.05] + [i / 20 for i in range(20)]
    cut = _threshold(scores, failed, 0.05)
    assert cut == 0.9  # 5% of 20 good actions: one (0.95) may lie above the threshold
    rates = _rates(scores, failed, cut)
    assert rates == {"failing_vetoed": round(1 / 3, 3), "good_vetoed": 0.05}
    assert _rates(scores, failed, 0.45)["good_vetoed"] == round(10 / 20, 3)
    assert _threshold([0.2, 0.1], [False, False], 0.0) == 0.2


def test_the_probe_learns_a_direction_that_separates_failures() -> None:
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(200, 16, generator=gen)
    failed = [bool(v) for v in (x[:, 3] > 0.5).tolist()]
    probe = _fit(torch, x, failed, l2=0.01)
    ranked = auc(probe(x), failed)
    assert ranked is not None
    assert ranked > 0.99
    noise = [bool(v) for v in (torch.rand(200, generator=gen) > 0.7).tolist()]
    chance = auc(_fit(torch, x, noise, l2=0.01)(torch.randn(200, 16, generator=gen)), noise)
    assert chance is not None
    assert 0.3 < chance < 0.7  # labels unrelated to the features: no signal on new points
