"""Engine behaviour over a deterministic in-process world model (FunctionWorldModel)."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from aw_lookahead.errors import ConfigError, UsageError
from aw_lookahead.lookahead import (
    Decision,
    DecisionKind,
    Lookahead,
    Outcome,
    PredictionCache,
    Verdict,
    shell_effects,
    shell_parse,
)
from aw_lookahead.prompts import PromptSet
from aw_lookahead.trajectory import Action, Trajectory, action_text
from aw_lookahead.worldmodel import FunctionWorldModel, Prediction
from render_support import RenderCounter

OUTPUTS = {
    "nope": "bash: nope: command not found",
    "rm -v a.txt": "removed 'a.txt'",
    "cat missing": "cat: missing: No such file or directory",
}


def shell_model() -> FunctionWorldModel:
    return FunctionWorldModel(lambda t, a: OUTPUTS.get(action_text(a), f"ok {action_text(a)}"))


TRAJ = Trajectory(domain="terminal", task="tidy the repo")


async def test_gate_order_kinds_and_json() -> None:
    wm = shell_model()
    lk = Lookahead(wm)
    actions: list[Action] = ["echo hi", "nope", "rm -v a.txt"]
    decisions = await lk.gate(TRAJ, actions)
    assert [d.index for d in decisions] == [0, 1, 2]
    assert [d.action for d in decisions] == actions
    assert [d.kind for d in decisions] == [
        DecisionKind.EXECUTE,
        DecisionKind.VETO,
        DecisionKind.VETO,
    ]
    assert [d.outcome for d in decisions] == [Outcome.UNKNOWN, Outcome.FAILURE, Outcome.RISKY]
    assert wm.calls == 3
    for d in decisions:
        again = Decision.model_validate(json.loads(json.dumps(d.model_dump(mode="json"))))
        assert again == d
    assert "command not found" in decisions[1].explain()
    assert decisions[1].predicted_observation == OUTPUTS["nope"]


async def test_gate_policy_risky_and_never() -> None:
    wm = shell_model()
    risky = await Lookahead(wm, simulate="risky").gate(TRAJ, ["ls -la", "rm -v a.txt"])
    assert risky[0].kind is DecisionKind.SKIPPED
    assert risky[0].metadata["route"]["read_only"] is True
    assert risky[1].kind is DecisionKind.VETO
    assert wm.calls == 1
    never = await Lookahead(wm, simulate="never").gate(TRAJ, ["touch a.txt", "rm -v a.txt"])
    assert never[0].kind is DecisionKind.SKIPPED
    assert never[1].kind is DecisionKind.VETO  # rm deletes: never unchecked
    assert wm.calls == 1


async def test_veto_outcomes_configurable() -> None:
    lk = Lookahead(shell_model(), veto_outcomes={Outcome.FAILURE})
    [d] = await lk.gate(TRAJ, ["rm -v a.txt"])
    assert d.kind is DecisionKind.EXECUTE
    assert d.outcome is Outcome.RISKY


async def test_select_prunes_and_ranks() -> None:
    result = await Lookahead(shell_model()).select(TRAJ, ["nope", "echo a", "rm -v a.txt"])
    assert result.chosen is not None
    assert result.chosen.action == "echo a"
    assert {d.index for d in result.pruned} == {0, 2}
    assert [d.index for d in result.decisions] == [1, 0, 2]
    none = await Lookahead(shell_model()).select(TRAJ, ["nope", "cat missing"])
    assert none.chosen is None
    assert "pruned" in none.reason
    with pytest.raises(UsageError):
        await Lookahead(shell_model()).select(TRAJ, [])


class ProgressJudge:
    """A judge that scores by a fixed table: stands in for an LLM judge's progress."""

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    async def judge(
        self,
        trajectory: Trajectory,
        action: Action,
        prediction: Prediction,
        *,
        task: str | None = None,
    ) -> Verdict:
        return Verdict(outcome=Outcome.SUCCESS, progress=self.table[action_text(action)])


async def test_select_ranks_by_progress_and_rules_still_veto() -> None:
    from aw_lookahead.lookahead import RuleJudge

    judge = ProgressJudge({"echo a": 0.2, "echo b": 0.9, "nope": 1.0})
    lk = Lookahead(shell_model(), judges=[RuleJudge(), judge])
    result = await lk.select(TRAJ, ["echo a", "echo b", "nope"])
    assert result.chosen is not None
    assert result.chosen.action == "echo b"
    assert result.chosen.score == pytest.approx(0.9)
    assert [d.action for d in result.pruned] == ["nope"]


async def test_rollout_feeds_predictions_back_and_stops() -> None:
    seen: list[int] = []

    def fn(t: Trajectory, a: Action) -> str:
        seen.append(len(t.turns))
        return OUTPUTS.get(action_text(a), f"ok {action_text(a)}")

    lk = Lookahead(FunctionWorldModel(fn))
    result = await lk.rollout(TRAJ, ["echo 1", "echo 2", "nope", "echo 3"])
    assert seen == [0, 1, 2]
    assert result.failed_at == 2
    assert len(result.steps) == 3
    assert [t.observation for t in result.trajectory.turns] == [
        "ok echo 1",
        "ok echo 2",
        OUTPUTS["nope"],
    ]
    assert result.trajectory.turns[0].metadata["predicted"] is True
    ok = await lk.rollout(TRAJ, ["echo 1", "echo 2", "nope"], depth=2)
    assert ok.failed_at is None
    assert len(ok.steps) == 2


async def test_cache_identical_state_costs_nothing_repeat_later_is_fresh() -> None:
    wm = shell_model()
    lk = Lookahead(wm)
    [first] = await lk.gate(TRAJ, ["echo hi"])
    [again] = await lk.gate(TRAJ, ["echo hi"])
    assert wm.calls == 1
    assert again.cached
    assert again.tokens == 0
    assert again.predicted_observation == first.predicted_observation
    later = TRAJ.with_turn("echo hi", "hi").with_turn("ls", "a.txt")
    [fresh] = await lk.gate(later, ["echo hi"])
    assert wm.calls == 2
    assert not fresh.cached
    await lk.gate(TRAJ, ["echo x", "echo x"])
    assert wm.calls == 3
    no_cache = Lookahead(wm, cache=False)
    await no_cache.gate(TRAJ, ["echo hi"])
    assert wm.calls == 4


async def test_call_index_separates_repeats_with_identical_render() -> None:
    """Two histories that render alike still differ by the call index of the action."""
    from aw_lookahead.lookahead.cache import step_keys
    from aw_lookahead.worldmodel.base import Step

    traj = TRAJ.with_turn("ls", "a")
    ls, pwd = step_keys("m", Step(traj, ["ls", "pwd"]))
    assert ls != pwd
    assert step_keys("m", Step(traj, ["ls"])) == [ls]
    assert step_keys("other", Step(traj, ["ls"])) != [ls]


async def test_disk_cache_survives_restart(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    wm = shell_model()
    await Lookahead(wm, cache=PredictionCache(path=path)).gate(TRAJ, ["echo hi", "nope"])
    assert wm.calls == 2
    reopened = PredictionCache(path=path)
    assert len(reopened) == 2
    decisions = await Lookahead(wm, cache=reopened).gate(TRAJ, ["echo hi", "nope"])
    assert wm.calls == 2
    assert all(d.cached for d in decisions)
    assert decisions[1].kind is DecisionKind.VETO


def test_sync_wrappers_and_config_errors() -> None:
    lk = Lookahead(shell_model())
    assert lk.gate_sync(TRAJ, ["nope"])[0].kind is DecisionKind.VETO
    assert lk.select_sync(TRAJ, ["echo a"]).chosen is not None
    assert lk.rollout_sync(TRAJ, ["echo a"]).failed_at is None
    with pytest.raises(ConfigError, match="simulate"):
        Lookahead(shell_model(), simulate="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="on_error"):
        Lookahead(shell_model(), on_error="shrug")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="deadline"):
        Lookahead(shell_model(), deadline_s=0)


class ProtocolOnly:
    """A world model written against the bare protocol: no base class, no step members."""

    def __init__(self, prompts: PromptSet | None = None) -> None:
        self.prompts = prompts
        self.calls = 0

    @property
    def model_id(self) -> str:
        return "protocol-only"

    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction:
        self.calls += 1
        return Prediction(action=action, observation=f"ok {action_text(action)}")

    async def predict_many(
        self, trajectory: Trajectory, actions: Sequence[Action], *, return_exceptions: bool = False
    ) -> list[Prediction]:
        return [await self.predict(trajectory, a) for a in actions]


async def test_a_protocol_only_world_model_takes_the_default_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wm = ProtocolOnly(PromptSet(tool_layout="full"))
    lk = Lookahead(wm)
    counter = RenderCounter(monkeypatch)
    traj = TRAJ.with_turn("ls", "a.txt")
    decisions = await lk.gate(traj, ["echo a", "echo b", "echo c", "echo a"])
    assert counter.take() == 1
    assert wm.calls == 3
    assert [d.kind for d in decisions] == [DecisionKind.EXECUTE] * 4
    await lk.gate(traj, ["echo a", "echo b", "echo c"])
    assert counter.take() == 1
    assert wm.calls == 3
    function = FunctionWorldModel(lambda t, a: "ok")
    await Lookahead(function, cache=False).select(traj, ["echo a", "echo b", "echo c"])
    assert counter.take() == 0, "without a cache an unrendering world model renders nothing"


async def test_one_parse_of_the_shell_text_per_action(monkeypatch: pytest.MonkeyPatch) -> None:
    """The router, the rule judge and the effect classifier read one parse of the text."""
    parsed: list[str] = []
    real = shell_parse._parse

    def counted(text: str) -> shell_parse.Script:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(shell_parse, "_parse_short", functools.lru_cache(maxsize=2048)(counted))
    action = "sed 's/a/b' parse-count.txt > parse-count.out"
    wm = FunctionWorldModel(lambda t, a: "sed: -e expression #1, char 5: unterminated `s' command")
    lk = Lookahead(wm, simulate="risky", cache=False)
    shared = shell_parse._parse_short

    async def gate_once() -> Decision:
        shared.cache_clear()
        shell_effects._cached.cache_clear()
        parsed.clear()
        [decision] = await lk.gate(TRAJ, [action])
        return decision

    decision = await gate_once()
    assert parsed == [action]
    assert decision.metadata["route"]["read_only"] is False  # the router read it
    assert decision.kind is DecisionKind.VETO
    assert decision.outcome is Outcome.FAILURE
    evidence = json.dumps(decision.model_dump(mode="json"))
    assert "shell.program_error" in evidence  # the rule judge read the programs it runs
    assert "overwrites" in evidence  # the effect classifier read the redirection
    # without the shared parse, each reader parses the text again
    monkeypatch.setattr(shell_parse, "_parse_short", counted)
    await gate_once()
    assert parsed.count(action) >= 3


class NoModelId:
    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction:
        raise NotImplementedError

    predict_many = None


def test_the_protocol_is_checked_at_construction() -> None:
    with pytest.raises(ConfigError) as info:
        Lookahead(NoModelId())  # type: ignore[arg-type]
    text = str(info.value)
    assert "NoModelId" in text
    assert "model_id is missing" in text
    assert "predict_many is not callable" in text
    assert "predict is" not in text
    assert "BaseWorldModel" in text
    wrong = ProtocolOnly()
    wrong.prompts = "prompts/"  # type: ignore[assignment]
    with pytest.raises(ConfigError, match="prompts is str, not a PromptSet"):
        Lookahead(wrong)
