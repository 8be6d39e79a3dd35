"""The one OpenAI-compatible provider layer, seen from every component that talks to a server.

The world model, the engine's ``LLMJudge``, the evaluation's ``RubricJudge``
and ``ReferenceJudge`` and the ``official`` protocol all send through
``OpenAIProvider.chat``: the same environment names, the same redaction and
the same mapping of failures to our error types. The settle loop is
``BaseWorldModel``'s, whatever the backend prepares per step.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import string
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.agentworldbench import sample_to_record
from aw_lookahead.endpoint import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    JUDGE_ENV_BASE_URL,
    OpenAIProvider,
    request_body,
)
from aw_lookahead.errors import JudgeError, ServerUnreachableError
from aw_lookahead.evaluation import ReferenceJudge, RubricJudge
from aw_lookahead.evaluation.judges.reference import load_reference_judge_prompts
from aw_lookahead.evaluation.official import OfficialModel
from aw_lookahead.lookahead import LLMJudge
from aw_lookahead.trajectory import Action, Trajectory, Turn, TurnSample
from aw_lookahead.worldmodel import BaseWorldModel, OpenAIWorldModel, Prediction
from test_redact_acceptance import Relay, relay  # noqa: F401  (the logging relay fixture)

TOKEN = "ghp_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _sample() -> TurnSample:
    traj = Trajectory(
        domain="terminal",
        task="check the deploy token",
        turns=[
            Turn(action="echo $GH_TOKEN", observation=f"$ echo $GH_TOKEN\n{TOKEN}"),
            Turn(action="ls", observation="$ ls\napp.py"),
        ],
    )
    return TurnSample(trajectory=traj, turn_idx=2, id="s1")


def _judge_prompts(tmp_path: Path) -> Any:
    (tmp_path / "terminal").mkdir()
    (tmp_path / "terminal" / "judge_system_prompt.txt").write_text("Grade the simulator.")
    return load_reference_judge_prompts(tmp_path)


# ----------------------------------------------------------------------------- settings


def test_environment_names_are_resolved_once_for_every_component(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ENV_API_KEY, raising=False)
    monkeypatch.setenv(ENV_BASE_URL, "http://wm.example:1/v1/")
    monkeypatch.setenv(ENV_MODEL, "wm-model")
    monkeypatch.setenv(JUDGE_ENV_BASE_URL, "http://judge.example:2/v1")
    wm = OpenAIWorldModel()
    engine_judge = LLMJudge()
    assert (wm.base_url, wm.model) == ("http://wm.example:1/v1", "wm-model")
    assert (engine_judge.base_url, engine_judge.model) == ("http://wm.example:1/v1", "wm-model")
    assert RubricJudge("j").base_url == "http://judge.example:2/v1"
    provider = OpenAIProvider.resolve(base_url="http://given:3/v1", model="m")
    assert (provider.base_url, provider.model, provider.api_key) == (
        "http://given:3/v1",
        "m",
        "EMPTY",
    )


def test_request_body_sets_thinking_and_keeps_the_callers_dict() -> None:
    extra = {"chat_template_kwargs": {"foo": 1}, "top_k": 5}
    body = request_body(extra, thinking=False)
    assert body == {"chat_template_kwargs": {"foo": 1, "enable_thinking": False}, "top_k": 5}
    assert extra == {"chat_template_kwargs": {"foo": 1}, "top_k": 5}
    assert request_body(None, thinking=None) == {}


# ----------------------------------------------------------------------------- one error table


async def test_a_dead_server_is_the_same_error_for_every_component(tmp_path: Path) -> None:
    url = _dead_url()
    sample = _sample()
    prediction = Prediction(action="ls", observation="app.py")

    with pytest.raises(JudgeError) as judged:
        await LLMJudge("m", base_url=url, timeout=5).judge(sample.history, "ls", prediction)
    assert isinstance(judged.value.__cause__, ServerUnreachableError)

    rubric = RubricJudge("m", base_url=url, retries=0, timeout=5)
    outcome = await rubric.score(sample, "app.py")
    await rubric.aclose()
    assert outcome.failed
    assert outcome.error is not None
    assert outcome.error.startswith("ServerUnreachableError: no world-model server answers at")

    reference = ReferenceJudge(
        "m", _judge_prompts(tmp_path), base_url=url, attempts=1, retry_pause_s=0, timeout=5
    )
    verdict = await reference.verdict(sample_to_record(sample), "app.py")
    await reference.aclose()
    assert verdict["failed"]
    assert str(verdict["error"]).startswith("ServerUnreachableError:")

    async with OfficialModel("m", base_url=url, retries=0, timeout=5) as official:
        with pytest.raises(ServerUnreachableError, match=url):
            await official.complete(official.messages(sample))


# ----------------------------------------------------------------------------- one redacted call


@pytest.mark.integration
async def test_every_component_sends_redacted_messages(
    relay: Relay,  # noqa: F811
    vllm_server: Any,
    tmp_path: Path,
) -> None:
    sample = _sample()
    record = sample_to_record(sample)
    prediction = Prediction(action="ls", observation=f"app.py {TOKEN}")
    common: dict[str, Any] = {"base_url": relay.url, "api_key": vllm_server.api_key}

    async with OpenAIWorldModel(vllm_server.model, max_tokens=8, timeout=300, **common) as wm:
        await wm.predict(sample.history, "ls")
    async with LLMJudge(vllm_server.model, max_tokens=60, timeout=300, **common) as judge:
        # A tiny model's verdict may not parse; only what was sent matters here.
        with contextlib.suppress(JudgeError):
            await judge.judge(sample.history, "ls", prediction)
    rubric = RubricJudge(vllm_server.model, max_tokens=60, retries=0, timeout=300, **common)
    await rubric.score(sample, f"app.py {TOKEN}")
    await rubric.aclose()
    reference = ReferenceJudge(
        vllm_server.model, _judge_prompts(tmp_path), max_tokens=8, attempts=1, **common
    )
    await reference.verdict(record, f"app.py {TOKEN}")
    await reference.aclose()
    async with OfficialModel(vllm_server.model, max_tokens=8, timeout=300, **common) as official:
        await official.complete(official.messages(sample))

    chats = [b.decode() for b in relay.bodies if b'"messages"' in b]
    assert len(chats) >= 5
    for body in chats:
        assert TOKEN not in body
        assert "[REDACTED_" in body


# ----------------------------------------------------------------------------- one settle loop


class _Settled(BaseWorldModel):
    """The base's step: each candidate through ``predict``; "fail" fails, "bug" is a bug."""

    @property
    def model_id(self) -> str:
        return "settled"

    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction:
        if action == "bug":
            raise KeyError("a bug is not settled")
        if action == "fail":
            raise ServerUnreachableError("mem://", "one candidate")
        return Prediction(action=action, observation=f"{action} seen")


async def test_the_base_settle_loop_settles_each_candidate_and_lets_bugs_through() -> None:
    wm = _Settled()
    traj = Trajectory(domain="terminal", turns=[])
    settled = await wm.predict_many(traj, ["ls", "fail", "cat"], return_exceptions=True)
    assert isinstance(settled[0], Prediction)
    assert settled[0].observation == "ls seen"
    assert isinstance(settled[1], ServerUnreachableError)
    assert isinstance(settled[2], Prediction)
    assert await wm.predict_many(traj, []) == []
    with pytest.raises(ServerUnreachableError):
        await wm.predict_many(traj, ["ls", "fail"])
    with pytest.raises(KeyError):
        await wm.predict_many(traj, ["ls", "bug"], return_exceptions=True)


async def test_a_server_down_is_every_candidates_result_from_one_shared_check() -> None:
    wm = OpenAIWorldModel("m", base_url=_dead_url(), retries=0)
    traj = Trajectory(domain="terminal", turns=[])
    results = await wm.predict_many(traj, ["a", "b"], return_exceptions=True)
    assert len(results) == 2
    assert isinstance(results[0], ServerUnreachableError)
    assert results[0] is results[1]  # the served model is asked once for the step
