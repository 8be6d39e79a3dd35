"""Acceptance for destructive-by-effect: the whole shell corpus under every world-model fault.

Real parts: the engine with its default judges, router and ``on_error`` (fail_safe),
the real ``OpenAIWorldModel`` client against a dead port, a socket that never
answers, a server that answers garbage and one that says the prompt is over the
context; the real sandboxed shell runs every line the gate lets through; the real
LangGraph middleware with a real shell tool. Nothing destructive is ever sent to the
shell: the set the gate lets through is compared with the harmless corpus *before*
anything runs.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from aw_lookahead.lookahead import DecisionKind, Lookahead, Outcome
from aw_lookahead.sandbox import TerminalSandbox
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel, OpenAIWorldModel
from shell_corpus_support import DESTROYS, HARMLESS, OVERWRITES

pytestmark = pytest.mark.integration

TRAJ = Trajectory(domain="terminal", task="Summarise the files in data/.")


def _keys(line: str, tail: str) -> list[dict[str, Any]]:
    return [{"keystrokes": line + "\n", "duration": 0.5}, {"keystrokes": tail}]


# Destroying lines as keystroke actions that end in a control key (the old bypass),
# overwriting lines as plain text, harmless lines as keystrokes ending in Enter.
ACTIONS: list[Action] = [
    *[_keys(line, ("C-c", "Tab", "Up", "C-d")[i % 4]) for i, line in enumerate(DESTROYS)],
    *OVERWRITES,
    *[[{"keystrokes": line, "duration": 0.5}, {"keystrokes": "Enter"}] for line in HARMLESS],
]
N_BLOCKED = len(DESTROYS) + len(OVERWRITES)


class _Faulty(BaseHTTPRequestHandler):
    mode = "garbage"

    def _reply(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.mode == "context":
            status, body = (
                400,
                json.dumps(
                    {
                        "object": "error",
                        "message": "This model's maximum context length is 4096 tokens. However, "
                        "you requested 90000 tokens (89000 in the messages). Please reduce it.",
                        "type": "BadRequestError",
                        "code": 400,
                    }
                ).encode(),
            )
        else:
            status, body = 200, b'{"choices": [{"message": {"content": 17}}], "id": '
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _reply

    def log_message(self, *args: object) -> None:
        pass


def _serve(mode: str) -> Iterator[str]:
    handler = type(f"_{mode}", (_Faulty,), {"mode": mode})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def garbage_url() -> Iterator[str]:
    yield from _serve("garbage")


@pytest.fixture(scope="module")
def context_url() -> Iterator[str]:
    yield from _serve("context")


@pytest.fixture
async def silent_url() -> AsyncIterator[str]:
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        await reader.read(1 << 20)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    for w in held:
        w.close()
    server.close()


def _dead_url() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


async def _gate_under(url: str) -> list[Any]:
    wm = OpenAIWorldModel("m", base_url=url, timeout=3.0, retries=0)
    lk = Lookahead(wm)  # default settings: on_error="fail_safe", default judges and router
    try:
        return await lk.gate(TRAJ, ACTIONS)
    finally:
        await wm.aclose()


def _split(decisions: list[Any]) -> tuple[list[Any], list[Any]]:
    blocked = decisions[:N_BLOCKED]
    allowed = decisions[N_BLOCKED:]
    bad = [d.action for d in blocked if d.executes]
    assert not bad, f"destructive lines would run: {bad[:5]}"
    refused = [(d.action, d.reason) for d in allowed if not d.executes]
    assert not refused, f"harmless lines blocked: {refused[:5]}"
    assert all(d.kind is DecisionKind.VETO for d in blocked)
    assert all("could not be checked" in d.reason for d in blocked)
    assert all(d.kind is DecisionKind.UNSIMULATED for d in allowed)
    return blocked, allowed


@pytest.mark.parametrize("fault", ["dead", "garbage", "over_context"])
async def test_faults_block_every_destructive_line_and_run_every_harmless_one(
    fault: str, garbage_url: str, context_url: str
) -> None:
    url = {"dead": _dead_url(), "garbage": garbage_url, "over_context": context_url}[fault]
    decisions = await _gate_under(url)
    _, allowed = _split(decisions)
    cause = {"dead": "unreachable", "garbage": "server", "over_context": "context"}[fault]
    assert {d.metadata["unchecked"]["cause"] for d in decisions} == {cause}
    if fault == "dead":  # run every harmless line for real, in the real shell
        await _run_in_sandbox([d.action for d in allowed])


async def test_a_world_model_that_never_answers(silent_url: str) -> None:
    decisions = await _gate_under(silent_url)
    _split(decisions)
    assert {d.metadata["unchecked"]["cause"] for d in decisions} <= {"timeout", "deadline"}


async def _run_in_sandbox(actions: list[Action]) -> None:
    async with TerminalSandbox(network=False) as sb:
        sb.write_file("data/a.csv", "1,2\n")
        sb.write_file("data/b.csv", "3,4\n")
        sb.write_file("notes.txt", "foo bar\n")
        root = sb.path
        ran = 0
        for action in actions:
            await sb.run(f"cd {root}", timeout=10.0)
            assert isinstance(action, list)
            result = await sb.run(str(action[0]["keystrokes"]), timeout=20.0)
            assert not result.timed_out, action
            ran += 1
        assert ran == len(HARMLESS)
        assert (root / "data" / "a.csv").read_text() == "1,2\n"
        assert (root / "data" / "b.csv").read_text() == "3,4\n"


async def test_a_working_model_predicting_success_still_grades_the_corpus() -> None:
    wm = FunctionWorldModel(lambda _t, _a: "", model_id="always-fine")
    decisions = await Lookahead(wm).gate(TRAJ, ACTIONS)
    destroys = decisions[: len(DESTROYS)]
    overwrites = decisions[len(DESTROYS) : N_BLOCKED]
    harmless = decisions[N_BLOCKED:]
    for d in destroys:
        assert d.kind is DecisionKind.VETO, d.action
        assert d.outcome is Outcome.RISKY
        assert any(s.name == "risk.destructive_command" for s in d.signals)
    for d in overwrites:  # judged by the prediction, with the overwrite named
        assert any(s.name == "risk.overwrite_command" for s in d.signals), d.action
    for d in harmless:
        assert d.kind is DecisionKind.EXECUTE, (d.action, d.reason)
        assert not any(s.name.startswith("risk.") for s in d.signals), d.action
