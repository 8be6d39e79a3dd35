"""The engine against the real local vLLM server (fixture ``vllm_server``)."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from openai import AsyncOpenAI

from aw_lookahead.lookahead import DecisionKind, LLMJudge, Lookahead, Outcome, RuleJudge
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import OpenAIWorldModel, Prediction
from render_support import RenderCounter

pytestmark = pytest.mark.integration

TRAJ = Trajectory(
    domain="terminal",
    task="List the Python files of the project",
    turns=[],
).with_turn("pwd", "/home/user/project")


class Recorder:
    """httpx event hooks: when each chat request left and when its reply came back."""

    def __init__(self) -> None:
        self.sent: list[float] = []
        self.answered: list[float] = []

    async def on_request(self, request: httpx.Request) -> None:
        if request.url.path.endswith("/chat/completions"):
            self.sent.append(time.perf_counter())

    async def on_response(self, response: httpx.Response) -> None:
        if response.request.url.path.endswith("/chat/completions"):
            self.answered.append(time.perf_counter())


def world_model(server: Any, recorder: Recorder, **kw: Any) -> OpenAIWorldModel:
    http = httpx.AsyncClient(
        event_hooks={"request": [recorder.on_request], "response": [recorder.on_response]},
        trust_env=False,
    )
    client = AsyncOpenAI(
        base_url=server.base_url,
        api_key=server.api_key,
        http_client=http,  # type: ignore[arg-type]
        max_retries=0,
    )
    return OpenAIWorldModel(server.model, client=client, max_tokens=24, timeout=600, **kw)


async def test_select_sends_k_requests_together(vllm_server: Any) -> None:
    rec = Recorder()
    wm = world_model(vllm_server, rec)
    lk = Lookahead(wm)
    candidates = ["ls *.py", "find . -name '*.py'", "git ls-files '*.py'", "ls -R"]
    result = await lk.select(TRAJ, candidates)
    assert len(rec.sent) == 4
    assert max(rec.sent) < min(rec.answered), "all K requests must be in flight together"
    assert len(result.decisions) == 4
    assert {d.index for d in result.decisions} == {0, 1, 2, 3}
    for d in result.decisions:
        assert d.kind in (DecisionKind.EXECUTE, DecisionKind.VETO)
        assert d.prediction is not None
        assert d.tokens > 0
    assert (result.chosen is None) == (len(result.pruned) == 4)
    again = await lk.select(TRAJ, candidates)
    assert len(rec.sent) == 4, "the repeated step is answered from the cache"
    assert all(d.cached for d in again.decisions)
    await wm._client.close()


async def test_gate_honours_policy(vllm_server: Any) -> None:
    rec = Recorder()
    wm = world_model(vllm_server, rec)
    actions: list[Action] = [
        [{"keystrokes": "ls -la\n", "duration": 0.1}],
        "rm -rf build/",
        "cat setup.py",
    ]
    risky = await Lookahead(wm, simulate="risky").gate(TRAJ, actions)
    assert [d.kind is DecisionKind.SKIPPED for d in risky] == [True, False, True]
    assert risky[1].prediction is not None
    assert len(rec.sent) == 1
    never = await Lookahead(wm, simulate="never").gate(TRAJ, actions)
    # Not simulated, but the action-level judges still run: fail_safe blocks rm -rf.
    assert [d.kind for d in never] == [
        DecisionKind.SKIPPED,
        DecisionKind.VETO,
        DecisionKind.SKIPPED,
    ]
    opened = await Lookahead(wm, simulate="never", on_error="fail_open").gate(TRAJ, actions)
    assert all(d.kind is DecisionKind.SKIPPED for d in opened)
    assert len(rec.sent) == 1
    always = await Lookahead(wm, simulate="always", cache=False).gate(TRAJ, actions)
    assert all(d.prediction is not None for d in always)
    assert len(rec.sent) == 4
    await wm._client.close()


async def test_llm_verdict_from_structured_output(vllm_server: Any) -> None:
    prediction = Prediction(
        action="cat setup.py", observation="cat: setup.py: No such file or directory"
    )
    async with LLMJudge(
        vllm_server.model,
        base_url=vllm_server.base_url,
        api_key=vllm_server.api_key,
    ) as judge:
        verdict = await judge.judge(TRAJ, "cat setup.py", prediction)
    assert verdict.outcome in (Outcome.SUCCESS, Outcome.FAILURE, Outcome.NO_OP, Outcome.RISKY)
    assert verdict.progress is not None
    assert 0.0 <= verdict.progress <= 1.0
    assert verdict.tokens > 0
    assert verdict.signals[0].source == "llm"
    async with (
        OpenAIWorldModel(
            vllm_server.model, base_url=vllm_server.base_url, max_tokens=24, timeout=600
        ) as wm,
        LLMJudge.from_world_model(wm) as wm_judge,
    ):
        lk = Lookahead(wm, judges=[RuleJudge(), wm_judge])
        result = await lk.select(TRAJ, ["ls", "ls -a"])
    for d in result.decisions:
        assert d.kind is not DecisionKind.UNSIMULATED, d.error
        assert d.progress is not None
        assert d.score == d.progress


async def test_llm_judge_rejects_unstructured_reply(vllm_server: Any) -> None:
    """Without the schema the model's free text is not a verdict: a JudgeError, not a pass."""
    from aw_lookahead.errors import JudgeError

    judge = LLMJudge(
        vllm_server.model,
        base_url=vllm_server.base_url,
        max_tokens=20,
        structured=False,
        extra_body={"structured_outputs": {"regex": "[a-z ]{5,15}"}},
    )
    prediction = Prediction(action="ls", observation="a.py b.py")
    async with judge:
        with pytest.raises(JudgeError) as info:
            await judge.judge(TRAJ, "ls", prediction)
    assert info.value.raw


async def test_the_history_is_rendered_once_per_step(
    vllm_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One history render per step: cache keys, context budget and K requests share it."""
    from aw_lookahead.prompts import render_messages
    from aw_lookahead.redact import redact_messages

    tools = [
        {"name": "read_file", "description": "Read a file.", "inputSchema": {"type": "object"}},
        {"name": "write_file", "description": "Write a file.", "inputSchema": {"type": "object"}},
    ]
    mcp = Trajectory(domain="mcp", task="Note the date in notes.txt", tools=tools).with_turn(
        {"name": "read_file", "arguments": {"path": "notes.txt"}}, "(empty file)"
    )
    terminal: list[Action] = ["ls *.py", "find . -name '*.py'", "git ls-files '*.py'", "ls -R"]
    mcp_calls: list[Action] = [
        {"name": "write_file", "arguments": {"path": "notes.txt", "content": "1 Dec"}},
        {"name": "read_file", "arguments": {"path": "notes.txt"}},
        {"name": "write_file", "arguments": {"path": "other.txt", "content": "1 Dec"}},
    ]
    bodies: list[bytes] = []

    async def on_request(request: httpx.Request) -> None:
        if request.url.path.endswith("/chat/completions"):
            bodies.append(request.content)

    http = httpx.AsyncClient(event_hooks={"request": [on_request]}, trust_env=False)
    client = AsyncOpenAI(
        base_url=vllm_server.base_url,
        api_key=vllm_server.api_key,
        http_client=http,
        max_retries=0,
    )
    try:
        wm = OpenAIWorldModel(vllm_server.model, client=client, max_tokens=24, timeout=600)
        await wm.resolve_model()  # learn max_model_len now, so the budget check runs every step
        # rendered with the served model's own prompt set (the embedded model's profile)
        expected = {
            json_key(m)
            for traj, actions in ((TRAJ, terminal), (mcp, mcp_calls))
            for a in actions
            for m in [redact_messages(render_messages(traj, a, prompts=wm.prompts))]
        }
        assert wm.served is not None
        assert wm.served.context_tokens is not None
        lk = Lookahead(wm)
        counter = RenderCounter(monkeypatch)

        result = await lk.select(TRAJ, terminal)
        assert counter.take() == 1
        assert len(bodies) == 4
        assert all(d.prediction is not None for d in result.decisions)
        decisions = await lk.gate(mcp, mcp_calls)
        assert counter.take() == 1
        assert len(bodies) == 7
        assert all(d.prediction is not None for d in decisions)
        again = await lk.select(TRAJ, terminal)
        assert counter.take() == 1, "a step answered from the cache still renders once (its keys)"
        assert len(bodies) == 7
        assert all(d.cached for d in again.decisions)
        rollout = await lk.rollout(TRAJ, ["mkdir out", "ls out"])
        assert counter.take() == len(rollout.steps)
        sent = {json_key(json.loads(b)["messages"]) for b in bodies[:7]}
        assert sent == expected, "the single rendering is byte for byte what render_messages gives"
    finally:
        await http.aclose()  # closed on failure too: a leaked client fails a later test


def json_key(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, sort_keys=True)
