"""The proxy keeps clients apart: preview tokens, histories, instructions, candidate caps,
and one session's large shadow record never holds up another's calls.

Clients are real MCP sessions over streamable HTTP (uvicorn on a free port)
in front of a real downstream MCP server started over stdio.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

pytest.importorskip("mcp")

from mcp import Client

from aw_lookahead.mcp import (
    CLIENT_KEY_HEADER,
    CONFIRM_ARG,
    Downstream,
    LookaheadProxy,
    ProxyConfig,
    ProxyMode,
    build_server,
    serve_http,
)
from aw_lookahead.redact import Redactor, set_default_redactor
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel

DOWNSTREAM = '''
import json, sys
from mcp.server import MCPServer

server = MCPServer("notes")
LOG = sys.argv[1]


@server.tool()
def note(text: str) -> str:
    """Store a note."""
    with open(LOG, "a") as fh:
        fh.write(json.dumps({"tool": "note", "text": text}) + "\\n")
    return f"stored note: {text}"


@server.tool()
def put(value: object) -> str:
    """Store any JSON value."""
    with open(LOG, "a") as fh:
        fh.write(json.dumps({"tool": "put", "value": value}) + "\\n")
    return f"stored value: {json.dumps(value)}"


server.run("stdio")
'''


class Recorder:
    """A world model that predicts success and keeps every trajectory it was shown."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def __call__(self, trajectory: Trajectory, action: Action) -> str:
        self.seen.append((json.dumps(action), trajectory.model_dump_json()))
        return "stored"

    def prompts_for(self, marker: str) -> list[str]:
        return [history for action, history in self.seen if marker in action]


def text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def executed(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


@asynccontextmanager
async def proxy_over_http(
    tmp_path: Path, mode: ProxyMode, model: Recorder, **config: Any
) -> AsyncIterator[tuple[str, LookaheadProxy]]:
    script = tmp_path / "notes_server.py"
    script.write_text(DOWNSTREAM)
    downstream = Downstream([sys.executable, str(script), str(tmp_path / "executed.jsonl")])
    proxy = LookaheadProxy(
        downstream,
        FunctionWorldModel(model),
        ProxyConfig(mode=mode, simulate="always", elicit=False, **config),
    )
    ports: list[int] = []
    ready = anyio.Event()

    def on_ready(port: int) -> None:
        ports.append(port)
        ready.set()

    async with proxy, anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve_http(proxy.server, port=0, on_ready=on_ready))
        with anyio.fail_after(60):
            await ready.wait()
        try:
            yield f"http://127.0.0.1:{ports[0]}/mcp", proxy
        finally:
            tg.cancel_scope.cancel()


def token_of(result: Any) -> str:
    assert result.is_error, text(result)
    assert "PREVIEW ONLY" in text(result)
    token = result.meta["io.github.aw-lookahead/decision"]["confirm_token"]
    assert isinstance(token, str)
    return token


async def test_preview_token_is_bound_to_session_and_exact_arguments(tmp_path: Path) -> None:
    log = tmp_path / "executed.jsonl"
    async with (
        proxy_over_http(tmp_path, ProxyMode.PREVIEW, Recorder()) as (url, _),
        Client(url, mode="legacy") as alice,
        Client(url, mode="legacy") as bob,
    ):
        stolen = token_of(await alice.call_tool("put", {"value": 1}))
        replay = await bob.call_tool("put", {"value": 1, CONFIRM_ARG: stolen})
        assert replay.is_error
        assert "issued to another session" in text(replay)
        assert executed(log) == []

        for wrong in (True, 1.0, "1"):
            token = token_of(await alice.call_tool("put", {"value": 1}))
            swapped = await alice.call_tool("put", {"value": wrong, CONFIRM_ARG: token})
            assert swapped.is_error
            assert "no longer matches" in text(swapped), wrong
            assert "still confirms the previewed call" in text(swapped)
        assert executed(log) == []
        # Neither a thief's replay nor a wrong retry used the tokens up.
        done = await alice.call_tool("put", {"value": 1, CONFIRM_ARG: token})
        assert not done.is_error, text(done)
        done = await alice.call_tool("put", {"value": 1, CONFIRM_ARG: stolen})
        assert not done.is_error, text(done)
        assert executed(log) == [{"tool": "put", "value": 1}] * 2

        nested = {"b": [1, {"c": True}], "a": None}
        token = token_of(await alice.call_tool("put", {"value": nested}))
        reordered = {"a": None, "b": [1, {"c": True}]}
        done = await alice.call_tool("put", {"value": reordered, CONFIRM_ARG: token})
        assert not done.is_error, text(done)
        again = await alice.call_tool("put", {"value": reordered, CONFIRM_ARG: token})
        assert "unknown, used or expired" in text(again)
    assert executed(log)[-1] == {"tool": "put", "value": reordered}


async def test_pending_tokens_are_capped_per_session(tmp_path: Path) -> None:
    log = tmp_path / "executed.jsonl"
    async with (
        proxy_over_http(tmp_path, ProxyMode.PREVIEW, Recorder(), max_pending_tokens=3) as (
            url,
            proxy,
        ),
        Client(url, mode="legacy") as alice,
        Client(url, mode="legacy") as bob,
    ):
        bobs = token_of(await bob.call_tool("note", {"text": "bob"}))
        tokens = [token_of(await alice.call_tool("note", {"text": f"n{i}"})) for i in range(5)]
        assert len(proxy._pending) == 4  # three of Alice's, Bob's untouched
        oldest = await alice.call_tool("note", {"text": "n0", CONFIRM_ARG: tokens[0]})
        assert "unknown, used or expired" in text(oldest)
        newest = await alice.call_tool("note", {"text": "n4", CONFIRM_ARG: tokens[4]})
        assert not newest.is_error, text(newest)
        kept = await bob.call_tool("note", {"text": "bob", CONFIRM_ARG: bobs})
        assert not kept.is_error, text(kept)
    assert [e["text"] for e in executed(log)] == ["n4", "bob"]


async def test_stateless_http_clients_never_see_each_other(tmp_path: Path) -> None:
    model = Recorder()
    async with proxy_over_http(tmp_path, ProxyMode.GATE, model) as (url, _):
        async with Client(url, mode="2026-07-28") as alice:
            assert alice.protocol_version == "2026-07-28"
            await alice.call_tool("note", {"text": "alice-secret-1"})
            await alice.call_tool("note", {"text": "alice-second"})
        async with Client(url, mode="2026-07-28") as bob:
            await bob.call_tool("note", {"text": "bob-first"})
        # a handshake-era session keeps its own history, as before
        async with Client(url, mode="legacy") as carol:
            await carol.call_tool("note", {"text": "carol-first"})
            await carol.call_tool("note", {"text": "carol-second"})
    (bob_prompt,) = model.prompts_for("bob-first")
    (alice_second,) = model.prompts_for("alice-second")
    (carol_second,) = model.prompts_for("carol-second")
    assert "alice-secret-1" not in bob_prompt
    assert "alice-secret-1" not in alice_second  # stateless: no history kept at all
    assert "stored note: carol-first" in carol_second
    for prompt in (*model.prompts_for("carol"), bob_prompt):
        assert "alice" not in prompt


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ({"Authorization": "Bearer alice"}, {"Authorization": "Bearer bob"}),
        # Clients sharing one credential are told apart by the key each sends.
        (
            {"Authorization": "Bearer team", CLIENT_KEY_HEADER: "a1"},
            {"Authorization": "Bearer team", CLIENT_KEY_HEADER: "b2"},
        ),
    ],
    ids=["bearer", "client-key"],
)
async def test_stateless_tokens_belong_to_their_caller(
    tmp_path: Path, one: dict[str, str], two: dict[str, str]
) -> None:
    log = tmp_path / "executed.jsonl"
    async with (
        proxy_over_http(tmp_path, ProxyMode.PREVIEW, Recorder()) as (url, _),
        httpx2.AsyncClient(headers=one, timeout=30) as as_first,
        httpx2.AsyncClient(headers=two, timeout=30) as as_second,
    ):
        from mcp.client.streamable_http import streamable_http_client

        async with (
            Client(streamable_http_client(url, http_client=as_first), mode="2026-07-28") as first,
            Client(streamable_http_client(url, http_client=as_second), mode="2026-07-28") as second,
        ):
            token = token_of(await first.call_tool("note", {"text": "x"}))
            replay = await second.call_tool("note", {"text": "x", CONFIRM_ARG: token})
            assert "issued to another session" in text(replay)
            assert executed(log) == []
            done = await first.call_tool("note", {"text": "x", CONFIRM_ARG: token})
            assert not done.is_error, text(done)
    assert executed(log) == [{"tool": "note", "text": "x"}]


async def test_instructions_name_only_the_executable(tmp_path: Path) -> None:
    secret = "sk-proj-DoNotLeakThisKey1234567890"
    proxy = LookaheadProxy(
        Downstream([sys.executable, "-m", "some_server", "--api-key", secret]),
        FunctionWorldModel(Recorder()),
    )
    instructions = proxy.server.create_initialization_options().instructions
    assert secret not in instructions
    assert "--api-key" not in instructions
    assert Path(sys.executable).name in instructions
    url = Downstream(url="https://user:pw@mcp.example/mcp?key=abc").label
    assert url == "https://mcp.example/mcp"


async def test_lookahead_candidates_are_capped() -> None:
    calls: list[Action] = []

    def model(trajectory: Trajectory, action: Action) -> str:
        calls.append(action)
        return "ok"

    server = build_server(FunctionWorldModel(model), max_candidates=4)
    async with Client(server) as client:
        many = await client.call_tool("lookahead", {"candidates": [f"echo {i}" for i in range(5)]})
        fine = await client.call_tool("lookahead", {"candidates": [f"echo {i}" for i in range(4)]})
    assert many.is_error
    assert "too many candidates: 5" in text(many)
    assert "at most 4" in text(many)
    assert not fine.is_error
    assert len(calls) == 4  # the refused call reached no model


class HeldRedactor(Redactor):
    """Redacts as usual, but holds a record that carries ``marker`` until ``release`` is set."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker = marker
        self.entered = threading.Event()
        self.release = threading.Event()
        self.threads: list[threading.Thread] = []

    def record(self, value: Any) -> Any:
        if self.marker in json.dumps(value):
            self.threads.append(threading.current_thread())
            self.entered.set()
            self.release.wait(120)
        return super().record(value)


async def test_a_large_shadow_record_does_not_hold_up_other_sessions(tmp_path: Path) -> None:
    # Alice's record is held inside redaction; Bob's call must be served meanwhile. Were
    # the write on the event loop, the loop would wait for the watchdog's release and Bob's
    # call could only end after it: the check is on that order, not on a duration.
    marker = f"LARGE-{secrets.token_hex(6)}"
    redactor = HeldRedactor(marker)
    set_default_redactor(redactor)  # the shadow log's JsonlWriter takes it at construction
    log = tmp_path / "shadow.jsonl"
    loop_thread = threading.current_thread()
    watchdog = threading.Timer(60, redactor.release.set)  # only ends a hang on the old code
    watchdog.start()
    try:
        async with (
            proxy_over_http(tmp_path, ProxyMode.SHADOW, Recorder(), shadow_log=log) as (url, _),
            Client(url, mode="legacy") as alice,
            Client(url, mode="legacy") as bob,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(alice.call_tool, "note", {"text": marker + "x" * 40_000})
            await anyio.to_thread.run_sync(redactor.entered.wait)
            served = await bob.call_tool("note", {"text": "small"})
            bob_served_while_held = not redactor.release.is_set()
            redactor.release.set()
    finally:
        watchdog.cancel()
        redactor.release.set()
        set_default_redactor(None)
    assert not served.is_error, text(served)
    assert bob_served_while_held
    assert redactor.threads == [redactor.threads[0]]
    assert redactor.threads[0] is not loop_thread
    records = [json.loads(line) for line in log.read_text().splitlines()]
    texts = sorted(len(r["action"]["arguments"]["text"]) for r in records)
    assert texts == [len("small"), len(marker) + 40_000]  # both written, the large one whole
