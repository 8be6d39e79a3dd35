"""on_error: fail_safe (default), fail_open, fail_closed - one definition for every adapter.

Faults are injected with a FunctionWorldModel that raises; the judges and the
router are the real ones.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from aw_lookahead.errors import ContextTooLongError, ServerUnreachableError
from aw_lookahead.lookahead import (
    Decision,
    DecisionKind,
    Lookahead,
    RiskRouter,
    action_hazard,
    default_deadline,
    unchecked_note,
)
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel, OpenAIWorldModel

TERM = Trajectory(domain="terminal")
TOOLS = [
    {"name": "read_file", "inputSchema": {}, "annotations": {"readOnlyHint": True}},
    {"name": "append_note", "inputSchema": {}, "annotations": {"destructiveHint": False}},
    {"name": "delete_file", "inputSchema": {}, "annotations": {"destructiveHint": True}},
    {"name": "bare", "inputSchema": {}},
]
MCP = Trajectory(domain="mcp", tools=TOOLS)


def failing(exc: Exception) -> FunctionWorldModel:
    def predict(_t: Trajectory, _a: Action) -> str:
        raise exc

    return FunctionWorldModel(predict, model_id="failing")


DOWN = ServerUnreachableError("http://127.0.0.1:9/v1")


async def test_fail_safe_is_the_default_and_blocks_only_destructive_terminal_commands() -> None:
    lk = Lookahead(failing(DOWN))
    assert lk.on_error == "fail_safe"
    decisions = await lk.gate(TERM, ["cat missing.txt", "rm -rf important", "ls", "git push -f"])
    assert [d.kind for d in decisions] == [
        DecisionKind.UNSIMULATED,
        DecisionKind.VETO,
        DecisionKind.UNSIMULATED,
        DecisionKind.VETO,
    ]
    veto = decisions[1]
    assert "could not be checked" in veto.reason
    assert "recursively" in veto.reason
    assert "NOT executed" in veto.explain()
    assert veto.metadata["unchecked"]["cause"] == "unreachable"
    assert "serve --local" in veto.metadata["unchecked"]["remedy"]
    note = unchecked_note(decisions[0])
    assert note is not None
    assert "WITHOUT a lookahead check" in note
    assert unchecked_note(veto) is None
    assert (lk.stats.errors, lk.stats.unchecked, lk.stats.blocked_unchecked) == (4, 2, 2)
    assert lk.stats.causes == {"unreachable": 4}


async def test_fail_safe_reads_mcp_annotations() -> None:
    lk = Lookahead(failing(DOWN))
    actions = [{"name": n, "arguments": {}} for n in ("append_note", "delete_file", "bare", "nope")]
    kinds = [d.kind for d in await lk.gate(MCP, actions)]
    assert kinds == [
        DecisionKind.UNSIMULATED,
        DecisionKind.VETO,  # destructiveHint: true
        DecisionKind.VETO,  # no annotations: MCP's default is "may be destructive"
        DecisionKind.VETO,  # no definition at all
    ]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("fail_open", [DecisionKind.UNSIMULATED, DecisionKind.UNSIMULATED]),
        ("fail_closed", [DecisionKind.VETO, DecisionKind.VETO]),
    ],
)
async def test_explicit_policies(policy: str, expected: list[DecisionKind]) -> None:
    lk = Lookahead(failing(DOWN), on_error=policy)  # type: ignore[arg-type]
    assert [d.kind for d in await lk.gate(TERM, ["ls", "rm -rf x"])] == expected


async def test_action_judges_run_on_simulated_actions_too() -> None:
    lk = Lookahead(FunctionWorldModel(lambda _t, a: "done", model_id="ok"))
    [d] = await lk.gate(MCP, [{"name": "delete_file", "arguments": {"path": "x"}}])
    assert d.kind is DecisionKind.EXECUTE
    assert any(s.name == "risk.mcp_destructive_hint" for s in d.signals)


async def test_routed_past_simulation_still_meets_the_action_judges() -> None:
    lk = Lookahead(failing(DOWN), simulate="never")
    decisions = await lk.gate(TERM, ["ls", "rm -rf data"])
    assert [d.kind for d in decisions] == [DecisionKind.SKIPPED, DecisionKind.VETO]


async def test_context_too_long_is_could_not_simulate_without_reachability_advice() -> None:
    lk = Lookahead(failing(ContextTooLongError(5000, 4096)), on_error="fail_closed")
    [d] = await lk.gate(TERM, ["ls"])
    assert d.kind is DecisionKind.VETO
    assert d.metadata["unchecked"]["cause"] == "context"
    text = (d.reason + d.explain() + d.metadata["unchecked"]["remedy"]).lower()
    assert "reachable" not in text
    assert "retry" not in text
    assert "max-model-len" in text


async def test_one_warning_per_cause(caplog: pytest.LogCaptureFixture) -> None:
    lk = Lookahead(failing(DOWN))
    for _ in range(3):
        await lk.gate(TERM, ["ls"])

    async def slow(_t: Trajectory, _a: Action) -> str:
        await asyncio.sleep(30)
        return "late"

    lk.world_model = FunctionWorldModel(slow, model_id="slow")
    lk.deadline_s = 0.2
    await lk.gate(TERM, ["pwd"])
    await lk.gate(TERM, ["pwd -P"])
    warned = [r.getMessage() for r in caplog.records if r.name == "aw_lookahead"]
    assert len(warned) == 2
    assert "unreachable" in warned[0]
    assert "deadline" in warned[1]
    assert all(r.levelno == logging.WARNING for r in caplog.records if r.name == "aw_lookahead")


def test_deadline_follows_the_client_timeout() -> None:
    wm = OpenAIWorldModel("m", base_url="http://127.0.0.1:9/v1", timeout=240)
    assert Lookahead(wm).deadline_s == default_deadline(wm) > 240
    assert Lookahead(wm, deadline_s=3).deadline_s == 3


def test_action_hazard_without_a_prediction() -> None:
    router = RiskRouter()
    assert action_hazard(router, TERM, "ls -la") is None
    hazard = action_hazard(router, TERM, [{"keystrokes": "rm -rf /tmp/x\n", "duration": 1}])
    assert hazard is not None
    assert hazard.name == "risk.destructive_command"
    assert action_hazard(router, MCP, {"name": "read_file", "arguments": {}}) is None


async def test_select_without_simulation_skips_destructive_candidates() -> None:
    lk = Lookahead(failing(DOWN), simulate="never")
    result = await lk.select(TERM, ["rm -rf build", "make clean"])
    assert result.chosen is not None
    assert result.chosen.action == "make clean"
    assert [d.kind for d in result.pruned] == [DecisionKind.VETO]


async def test_decisions_keep_the_typed_exception() -> None:
    lk = Lookahead(failing(DOWN))
    [decision] = await lk.gate(TERM, ["cat missing.txt"])
    assert isinstance(decision.exception, ServerUnreachableError)
    assert decision.exception is DOWN
    assert decision.error_type == "ServerUnreachableError"
    assert decision.error is not None
    assert "ServerUnreachableError" in decision.error
    dumped = decision.model_dump(mode="json")
    assert "exception" not in dumped
    assert dumped["error_type"] == "ServerUnreachableError"
    again = Decision.model_validate(dumped)
    assert again.exception is None
    assert again == decision


async def test_what_the_agent_reads_names_the_cause_without_operator_instructions() -> None:
    """Commands, URLs and settings for the operator go to the log, never to the policy model;
    the note is whole words, never cut."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    engine = Lookahead(OpenAIWorldModel("m", base_url=url, timeout=2))
    trajectory = Trajectory(domain="terminal", task="tidy", turns=[])
    veto, ran = await engine.gate(
        trajectory, [[{"keystrokes": "rm -rf data\n"}], [{"keystrokes": "ls\n"}]]
    )
    note = unchecked_note(ran)
    assert note == (
        "[lookahead] Note: this ran WITHOUT a lookahead check "
        "(the world model could not be reached)."
    )
    for text in (veto.explain(), ran.explain(), note):
        assert "serve --local" not in text
        assert url not in text
        assert "AW_LOOKAHEAD_BASE_URL" not in text
    assert "the world model could not be reached" in veto.explain()
    assert "serve --local" in ran.metadata["unchecked"]["remedy"]  # the operator still gets it
    assert url in (ran.error or "")
