"""The OpenAI-compatible world model against a real vLLM server, and its failure modes."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import closing, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from openai import AsyncOpenAI

from aw_lookahead.errors import (
    ConfigError,
    ContextTooLongError,
    ModelNotServedError,
    ServerError,
    ServerUnreachableError,
    WorldModelError,
    WorldModelTimeoutError,
)
from aw_lookahead.trajectory import Trajectory, Turn
from aw_lookahead.worldmodel import (
    FunctionWorldModel,
    OpenAIWorldModel,
    Prediction,
    WorldModel,
)

KEYS = [{"keystrokes": "ls -la\n", "duration": 0.5}]


def _long_history(turns: int, words: int) -> Trajectory:
    nonce = uuid.uuid4().hex  # a history no earlier test has cached
    return Trajectory(
        domain="terminal",
        task=f"Inspect the project {nonce}",
        turns=[
            Turn(
                action=[{"keystrokes": f"cat notes_{i}.txt\n", "duration": 0.2}],
                observation=f"$ cat notes_{i}.txt\n" + " ".join(f"w{i}_{j}" for j in range(words)),
            )
            for i in range(turns)
        ],
    )


@pytest.fixture
async def wm(vllm_server: Any) -> AsyncIterator[OpenAIWorldModel]:
    model = OpenAIWorldModel(
        vllm_server.model, base_url=vllm_server.base_url, max_tokens=24, timeout=600, seed=7
    )
    yield model
    await model.aclose()


@pytest.mark.integration
async def test_predict_returns_a_parsed_prediction(wm: OpenAIWorldModel) -> None:
    assert isinstance(wm, WorldModel)
    pred = await wm.predict(_long_history(1, 10), KEYS)
    assert pred.observation.strip()
    assert pred.model == wm.model
    assert pred.usage.prompt_tokens > 50
    assert 0 < pred.usage.completion_tokens <= 24
    assert pred.finish_reason in {"stop", "length"}
    assert pred.truncated == (pred.finish_reason == "length")
    assert pred.latency_s > 0
    assert pred.action == KEYS


@pytest.mark.integration
async def test_predict_many_sends_candidates_together_and_shares_the_prefix(
    vllm_server: Any,
) -> None:
    sent: list[float] = []
    answered: list[float] = []

    async def on_request(_req: httpx.Request) -> None:
        if _req.url.path.endswith("/chat/completions"):
            sent.append(time.perf_counter())

    async def on_response(resp: httpx.Response) -> None:
        if resp.request.url.path.endswith("/chat/completions"):
            answered.append(time.perf_counter())

    http = httpx.AsyncClient(event_hooks={"request": [on_request], "response": [on_response]})
    client = AsyncOpenAI(base_url=vllm_server.base_url, api_key="EMPTY", http_client=http)
    wm = OpenAIWorldModel(vllm_server.model, client=client, max_tokens=8, timeout=600)
    history = _long_history(12, 60)  # ~2,000 shared prompt tokens
    candidates = [
        [{"keystrokes": c, "duration": 0.5}] for c in ("ls\n", "rm -rf build\n", "pwd\n", "C-c")
    ]
    preds = await wm.predict_many(history, candidates)
    await http.aclose()

    assert [p.action for p in preds] == candidates
    assert len(sent) == 4
    assert max(sent) < min(answered), "all K requests must be in flight before the first answer"
    cached = sorted(p.usage.cached_tokens or 0 for p in preds)
    prompt = min(p.usage.prompt_tokens for p in preds)
    assert prompt > 1500
    # The shared history is computed once: later candidates reuse most of it.
    assert cached[-1] >= prompt // 2, [p.usage for p in preds]


@pytest.mark.integration
async def test_history_longer_than_the_context_is_trimmed(wm: OpenAIWorldModel) -> None:
    history = _long_history(30, 120)  # ~8,000 tokens against a 4,096 context
    pred = await wm.predict(history, KEYS)
    assert pred.trimmed_turns > 0
    assert pred.usage.prompt_tokens <= 4096 - wm.max_tokens


@pytest.mark.integration
async def test_long_tool_descriptions_are_shortened_last(wm: OpenAIWorldModel) -> None:
    """Compact MCP layout: history goes first, then descriptions shrink; the definition stays."""
    wordy = {
        "name": "write_file",
        "description": "Write a file. " + "It overwrites whatever was there before. " * 600,
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
    read = {"name": "read_file", "arguments": {"path": "/w/a"}}
    history = Trajectory(
        domain="mcp",
        tools=[wordy],
        turns=[Turn(action=read, observation="x" * 2000) for _ in range(3)],
    )
    pred = await wm.predict(history, {"name": "write_file", "arguments": {"path": "/w/b"}})
    assert pred.trimmed_turns == 2  # every turn but the first went before the descriptions
    assert pred.usage.prompt_tokens <= 4096 - wm.max_tokens


@pytest.mark.integration
async def test_first_turn_too_long_is_a_clear_error(wm: OpenAIWorldModel) -> None:
    history = _long_history(1, 6000)
    with pytest.raises(ContextTooLongError, match="does not fit"):
        await wm.predict(history, KEYS)


@pytest.mark.integration
async def test_unknown_model_lists_what_is_served(vllm_server: Any) -> None:
    async with OpenAIWorldModel("no-such-model", base_url=vllm_server.base_url) as wm:
        with pytest.raises(ModelNotServedError) as info:
            await wm.predict(_long_history(0, 0), "ls")
    assert vllm_server.model in info.value.served
    assert vllm_server.model in str(info.value)


@pytest.mark.integration
async def test_model_defaults_to_the_only_served_one(vllm_server: Any) -> None:
    async with OpenAIWorldModel(base_url=vllm_server.base_url, max_tokens=4) as wm:
        assert await wm.resolve_model() == vllm_server.model


@pytest.mark.integration
def test_sync_wrapper(vllm_server: Any) -> None:
    with closing(
        OpenAIWorldModel(
            vllm_server.model, base_url=vllm_server.base_url, max_tokens=8, seed=7, timeout=600
        )
    ) as wm:
        preds = wm.predict_many_sync(_long_history(1, 5), ["ls", "pwd"])
        assert [p.action for p in preds] == ["ls", "pwd"]
        assert wm.predict_sync(_long_history(1, 5), "ls").observation


# ----------------------------------------------------------------------------- faults


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_refused_connection_fails_fast_with_the_url() -> None:
    url = f"http://127.0.0.1:{_dead_port()}/v1"
    wm = OpenAIWorldModel("m", base_url=url, timeout=600)
    # refused at once: a wait for the 600 s timeout would end in WorldModelTimeoutError
    with pytest.raises(
        ServerUnreachableError, match=r"no world-model server answers at .*serve --local"
    ):
        await wm.predict(_long_history(0, 0), "ls")


async def test_silent_server_times_out() -> None:
    connections = 0

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await reader.read(1 << 16)
        await asyncio.sleep(3600)

    server = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        wm = OpenAIWorldModel("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=1.0)
        with pytest.raises(WorldModelTimeoutError, match="did not answer within 1 s"):
            await wm.predict(_long_history(0, 0), "ls")
        assert connections == 1  # a timeout is never retried
    finally:
        server.close()


class _Garbage(BaseHTTPRequestHandler):
    def _reply(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"<html>not an API</html>")

    do_GET = _reply
    do_POST = _reply

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def garbage_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Garbage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


async def test_non_json_reply_is_a_server_error(garbage_url: str) -> None:
    wm = OpenAIWorldModel("m", base_url=garbage_url, timeout=5)
    with pytest.raises(ServerError, match="not the JSON of an OpenAI-compatible API"):
        await wm.predict(_long_history(0, 0), "ls")


class _Status(BaseHTTPRequestHandler):
    """Answers every chat request with the status in ``self.server.status``, counting them."""

    def do_GET(self) -> None:
        body = b'{"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "x"}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.hits += 1  # type: ignore[attr-defined]
        status: int = self.server.status  # type: ignore[attr-defined]
        body = b'{"error": {"message": "injected", "type": "x", "code": %d}}' % status
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Huge(BaseHTTPRequestHandler):
    """Answers a chat request with 50 MiB of JSON, announced (Content-Length) or not."""

    do_GET = _Status.do_GET

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.hits += 1  # type: ignore[attr-defined]
        head = b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "pad": "'
        tail = b'", "choices": []}'
        size = 50 * 2**20
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if self.server.announce:  # type: ignore[attr-defined]
            self.send_header("Content-Length", str(len(head) + size + len(tail)))
        self.end_headers()
        try:
            self.wfile.write(head)
            for _ in range(size // 2**20):
                self.wfile.write(b"x" * 2**20)
            self.wfile.write(tail)
        except OSError:
            pass  # the client stopped reading: what the cap is for

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _http_server(handler: type[BaseHTTPRequestHandler], **attrs: object) -> Iterator[Any]:
    """``handler`` served on a free port in a thread; ``attrs`` set on the server."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    for name, value in attrs.items():
        setattr(server, name, value)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("announce", [True, False])
async def test_an_oversized_reply_is_refused_not_buffered(announce: bool) -> None:
    from aw_lookahead.endpoint import MAX_REPLY_BYTES

    with _http_server(_Huge, announce=announce, hits=0) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        async with OpenAIWorldModel("m", base_url=url, timeout=30, retries=2) as wm:
            with pytest.raises(ServerError, match=f"larger than {MAX_REPLY_BYTES} bytes"):
                await wm.predict(_long_history(0, 0), "ls")
        assert server.hits == 1  # an OpenAIError: the SDK does not retry it
    assert MAX_REPLY_BYTES < 50 * 2**20


@pytest.mark.parametrize(("status", "attempts"), [(503, 3), (429, 3), (400, 1), (422, 1)])
async def test_retries_only_on_429_and_5xx(status: int, attempts: int) -> None:
    with _http_server(_Status, status=status, hits=0) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        async with OpenAIWorldModel("m", base_url=url, timeout=10, retries=2) as wm:
            with pytest.raises(ServerError, match=f"HTTP {status}"):
                await wm.predict(_long_history(0, 0), "ls")
        assert server.hits == attempts


async def test_predict_many_can_settle_failures_per_candidate() -> None:
    wm = OpenAIWorldModel("m", base_url=f"http://127.0.0.1:{_dead_port()}/v1", timeout=2)
    results = await wm.predict_many(_long_history(0, 0), ["a", "b"], return_exceptions=True)
    assert len(results) == 2
    assert all(isinstance(r, ServerUnreachableError) for r in results)


def test_invalid_settings_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="max_tokens"):
        OpenAIWorldModel("m", max_tokens=0)
    with pytest.raises(ConfigError, match="timeout"):
        OpenAIWorldModel("m", timeout=0)


async def test_function_world_model_settles_and_raises() -> None:
    def fn(traj: Trajectory, action: Any) -> str:
        if action == "boom":
            raise ServerUnreachableError("mem://", "down")
        return f"ran {action} after {len(traj.turns)} turns"

    wm = FunctionWorldModel(fn)
    preds = await wm.predict_many(_long_history(2, 1), ["x", "y"])
    assert [p.observation for p in preds] == ["ran x after 2 turns", "ran y after 2 turns"]
    mixed = await wm.predict_many(_long_history(0, 0), ["x", "boom"], return_exceptions=True)
    assert isinstance(mixed[0], Prediction)
    assert isinstance(mixed[1], WorldModelError)
    with pytest.raises(ServerUnreachableError):
        await wm.predict_many(_long_history(0, 0), ["boom"])
