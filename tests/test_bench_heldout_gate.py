"""The held-out gate bench scores decisions against real outcomes correctly.

Its numbers go into the README and the model card, so the arithmetic is
checked on rows whose answers are known, and the truth it scores against is
the rule judges' reading of real recorded observations.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from heldout_gate import auc, summarize

from aw_lookahead.evaluation.calibration import CalibrationSample, failed_for_real
from aw_lookahead.lookahead import RuleJudge
from aw_lookahead.trajectory import Domain, Trajectory


def _row(
    failed: bool, p: float | None, vetoed: bool = False, raw: bool = False
) -> dict[str, object]:
    return {"failed": failed, "p_failure": p, "vetoed": vetoed, "raw": raw}


def test_auc_ranks_failing_above_good_and_counts_ties_half() -> None:
    assert auc([0.9, 0.8, 0.1, 0.2], [True, True, False, False]) == 1.0
    assert auc([0.1, 0.9], [True, False]) == 0.0
    assert auc([0.5, 0.5], [True, False]) == 0.5
    assert auc([0.3, 0.4], [False, False]) is None


def test_summary_counts_calibrated_and_raw_decisions_apart_and_leaves_unchecked_out() -> None:
    rows = [
        _row(True, 0.9, vetoed=True, raw=True),
        _row(True, 0.4, raw=True),
        _row(True, 0.1),
        _row(False, 0.3, raw=True),
        _row(False, 0.0),
        _row(False, 0.95, vetoed=True, raw=True),
        _row(True, None),
    ]
    s = summarize(rows)
    assert (s["actions"], s["unchecked"], s["failing"], s["good"]) == (7, 1, 3, 3)
    assert (s["failing_vetoed"], s["good_vetoed"]) == (1, 1)
    assert (s["raw_failing"], s["raw_good"]) == (2, 2)
    assert s["catch_rate"] == 0.333
    assert s["false_veto_rate"] == 0.333
    assert s["agreement"] == 0.5  # rows 1, 4, 5 of the six checked
    assert s["raw_agreement"] == 0.5  # rows 1, 2, 5
    assert s["auc"] == round(5 / 9, 3)  # 0.9 and 0.4 beat two good rows each, 0.1 one


async def test_the_truth_is_the_rule_judges_reading_of_the_real_observation() -> None:
    history = Trajectory(domain=Domain.TERMINAL, task="Read the notes.")
    action = [{"keystrokes": "cat notes.txt\n", "duration": 1.0}]
    missing = CalibrationSample(
        "t#1", history, action, "$ cat notes.txt\ncat: notes.txt: No such file or directory\n$ "
    )
    present = CalibrationSample("t#1", history, action, "$ cat notes.txt\nbuy milk\n$ ")
    assert await failed_for_real([RuleJudge()], missing) is True
    assert await failed_for_real([RuleJudge()], present) is False
