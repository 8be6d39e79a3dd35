"""The one world-model contract: defaults for a bare-protocol object, one trimming order.

The "context too long" retry is checked against a real loopback HTTP server that
refuses any prompt of more than a set number of messages, as a server does whose
context the client does not know (no ``max_model_len``: nothing is cut ahead).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from aw_lookahead.errors import ContextTooLongError
from aw_lookahead.prompts import PromptSet
from aw_lookahead.trajectory import Action, Trajectory, action_text
from aw_lookahead.worldmodel import FunctionWorldModel, OpenAIWorldModel, Prediction, Step
from aw_lookahead.worldmodel._context import Fit, fit_step, shrink
from aw_lookahead.worldmodel.conform import ProtocolWorldModel, conform

TOOL = {"name": "read_file", "description": "Read a file. " + "Long words. " * 40}


def _history(turns: int, *, tools: bool = False, words: int = 20) -> Trajectory:
    traj = Trajectory(domain="terminal", task="tidy", tools=[TOOL] if tools else None)
    for i in range(turns):
        traj = traj.with_turn(f"cat f{i}.txt", f"line {i} " * words)
    return traj


# ----------------------------------------------------------------------------- trimming order


def test_shrink_drops_old_turns_first_then_shortens_tools_then_gives_up() -> None:
    traj = _history(4, tools=True)
    fits = [Fit()]
    while (smaller := shrink(traj, fits[-1])) is not None:
        fits.append(smaller)
    assert fits == [Fit(0), Fit(1), Fit(2), Fit(3), Fit(3, brief=True)]  # turn 1 always stays
    assert shrink(_history(4), Fit(3)) is None  # no tools: nothing left to shorten
    per_turn = len(b"cat f1.txt") + len(("line 1 " * 20).encode())
    assert shrink(traj, Fit(), excess_bytes=per_turn + 1) == Fit(2)  # enough bytes, at once


async def test_fit_step_cuts_until_the_longest_request_fits_else_says_so() -> None:
    step = Step(_history(6, words=300), ["ls", "cat a_much_longer_name.txt"])
    asked: list[int] = []

    async def count(messages: list[dict[str, str]]) -> int | None:
        asked.append(len(messages))
        return sum(len(m["content"]) for m in messages) // 4

    whole = await count(step.messages.messages(1))
    assert await fit_step(step, count=count, max_model_len=None, max_tokens=10) == Fit()
    assert await fit_step(step, count=count, max_model_len=whole * 100, max_tokens=10) == Fit()
    asked.clear()
    fit = await fit_step(step, count=count, max_model_len=whole // 2 + 10, max_tokens=10)
    assert 0 < fit.skip <= 5
    assert not fit.brief
    assert await count(step.fit(fit.skip, fit.brief).messages(1)) <= whole // 2
    assert asked  # the byte estimate said it may not fit: the server's count was asked
    with pytest.raises(ContextTooLongError, match="does not fit"):
        await fit_step(step, count=count, max_model_len=20, max_tokens=10)


# ----------------------------------------------------------------------------- the retry


class _Refusing(BaseHTTPRequestHandler):
    """``/v1/models``: ``m``, no context length; chat: refused as too long above
    ``server.allow`` messages, else one observation. Records each chat's message count."""

    def _send(self, status: int, data: dict[str, Any]) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        sent = len(body["messages"])
        self.server.sent.append(sent)  # type: ignore[attr-defined]
        if sent > self.server.allow:  # type: ignore[attr-defined]
            message = "This model's maximum context length is 100 tokens; the prompt is too long"
            self._send(400, {"error": {"message": message, "type": "BadRequestError"}})
            return
        reply = {
            "role": "assistant",
            "content": "<predicted_observation>ok</predicted_observation>",
        }
        self._send(
            200,
            {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing() -> Iterator[Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    server.sent, server.allow = [], 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


async def test_a_refused_prompt_is_cut_a_turn_at_a_time_in_the_same_order(refusing: Any) -> None:
    url = f"http://127.0.0.1:{refusing.server_address[1]}/v1"
    traj = _history(5)  # system + 5 turns of 2 messages + the action's turn: 12 messages
    refusing.allow = 7
    async with OpenAIWorldModel("m", base_url=url, retries=0, timeout=10) as wm:
        pred = await wm.predict(traj, "ls")
        assert pred.observation == "ok"
        assert pred.trimmed_turns == 3
        assert refusing.sent == [12, 10, 8, 6]
        refusing.sent.clear()
        refusing.allow = 2  # not even the first turn and the action fit
        with pytest.raises(ContextTooLongError, match="maximum context length"):
            await wm.predict(traj, "ls")
    assert refusing.sent == [12, 10, 8, 6, 4]  # every droppable turn tried, then given up


# ----------------------------------------------------------------------------- conform


class _ProtocolOnly:
    """The bare protocol, with ``prompts`` and members the contract does not read from it."""

    timeout = 1.0

    def __init__(self) -> None:
        self.prompts: PromptSet | None = None

    @property
    def model_id(self) -> str:
        return "bare"

    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction:
        return Prediction(action=action, observation=f"ok {action_text(action)}")

    async def predict_many(
        self, trajectory: Trajectory, actions: Sequence[Action], *, return_exceptions: bool = False
    ) -> list[Prediction]:
        return [await self.predict(trajectory, a) for a in actions]


async def test_conform_gives_a_bare_protocol_object_the_defaults_and_keeps_a_base_as_is() -> None:
    function = FunctionWorldModel(lambda t, a: "ok")
    assert conform(function) is function
    bare = _ProtocolOnly()
    wm = conform(bare)
    assert isinstance(wm, ProtocolWorldModel)
    assert wm.model_id == "bare"
    assert (wm.has_server, wm.served, wm.timeout) == (False, None, None)
    assert (wm.model_name, await wm.resolve_model()) == ("bare", "bare")
    assert wm.sampling_settings() == {}
    assert wm.prepare_step(_history(1), ["ls"]).prompts is None
    bare.prompts = PromptSet(tool_layout="full")  # read at each step
    assert wm.prepare_step(_history(1), ["ls"]).prompts is bare.prompts
    [pred] = await wm.predict_step(wm.prepare_step(_history(1), ["ls"]))
    assert isinstance(pred, Prediction)
    assert pred.observation == "ok ls"
    await wm.aclose()
