"""veto_basis: a veto by the predicted observation is told apart from one by the action text."""

from __future__ import annotations

import pytest

from aw_lookahead.lookahead import Lookahead, RuleJudge
from aw_lookahead.lookahead.types import Decision, DecisionKind, Outcome, Signal, veto_basis
from aw_lookahead.trajectory import Action, Domain, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel


def _keys(command: str) -> Action:
    return [{"keystrokes": command + "\n", "duration": 1.0}]


PREDICTIONS = {
    "cat missing.txt": "$ cat missing.txt\ncat: missing.txt: No such file or directory\n",
    "rm -rf data": "$ rm -rf data\n",
    "ls data": "$ ls data\na.txt\n",
}


def _predict(trajectory: Trajectory, action: Action) -> str:
    command = str(action[0]["keystrokes"]).strip()  # type: ignore[index]
    return PREDICTIONS[command]


async def test_real_engine_decisions_name_their_basis() -> None:
    engine = Lookahead(FunctionWorldModel(_predict), judges=[RuleJudge()])
    trajectory = Trajectory(domain=Domain.TERMINAL, task="count lines in data/")
    commands = list(PREDICTIONS)
    gated = await engine.gate(trajectory, [_keys(c) for c in commands])
    decisions = dict(zip(commands, gated, strict=True))
    assert veto_basis(decisions["cat missing.txt"]) == "prediction"
    assert veto_basis(decisions["rm -rf data"]) == "action"
    assert veto_basis(decisions["ls data"]) is None
    dumped = decisions["cat missing.txt"].model_dump(mode="json")
    assert veto_basis(dumped) == "prediction"
    assert veto_basis(decisions["rm -rf data"].model_dump(mode="json")) == "action"


@pytest.mark.parametrize(
    ("signals", "outcome", "expected"),
    [
        ([Signal(source="engine", name="engine.world_model_error", outcome=Outcome.UNKNOWN)],
         Outcome.UNKNOWN, "unchecked"),
        ([Signal(source="llm", name="llm.verdict", outcome=Outcome.FAILURE)],
         Outcome.FAILURE, "prediction"),
        ([Signal(source="rule", name="risk.destructive_command", outcome=Outcome.RISKY),
          Signal(source="rule", name="shell.no_such_file", outcome=Outcome.FAILURE)],
         Outcome.RISKY, "action"),
    ],
)  # fmt: skip
def test_only_signals_with_the_deciding_outcome_count(
    signals: list[Signal], outcome: Outcome, expected: str
) -> None:
    decision = Decision(action=_keys("x"), kind=DecisionKind.VETO, outcome=outcome, signals=signals)
    assert veto_basis(decision) == expected
