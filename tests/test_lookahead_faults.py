"""World model down: refused port, a socket that never answers, a server that answers garbage.

Each must yield exactly the configured decision, with its cause; a silent server is cut
off by the engine's deadline, not by the request timeout.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from aw_lookahead.lookahead import DecisionKind, Lookahead
from aw_lookahead.trajectory import Trajectory
from aw_lookahead.worldmodel import OpenAIWorldModel

pytestmark = pytest.mark.integration

TRAJ = Trajectory(domain="terminal")
DEADLINE = 1.5


def dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def silent_url() -> AsyncIterator[str]:
    """Accepts connections and reads, but never writes a byte."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        await reader.read(65536)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/v1"
    for w in held:
        w.close()
    server.close()
    await server.wait_closed()


class _Garbage(BaseHTTPRequestHandler):
    def _reply(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        body = b"<html>this is not JSON at all"
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _reply

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def garbage_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Garbage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


async def _check(url: str, on_error: str, cause: str) -> None:
    """Both actions get the configured decision, with ``cause`` in their error."""
    wm = OpenAIWorldModel("m", base_url=url, timeout=30.0, retries=1)
    lk = Lookahead(wm, on_error=on_error, deadline_s=DEADLINE)  # type: ignore[arg-type]
    decisions = await lk.gate(TRAJ, ["rm -rf build", "ls"])
    await wm.aclose()
    expected = DecisionKind.UNSIMULATED if on_error == "fail_open" else DecisionKind.VETO
    assert [d.kind for d in decisions] == [expected, expected]
    for d in decisions:
        assert d.error is not None
        assert cause in d.error
        assert d.prediction is None
        assert d.signals[0].name == "engine.world_model_error"
    if on_error == "fail_closed":
        assert "fail_closed" in decisions[0].explain()


@pytest.mark.parametrize("on_error", ["fail_open", "fail_closed"])
async def test_refused_connection(on_error: str) -> None:
    await _check(f"http://127.0.0.1:{dead_port()}/v1", on_error, "no world-model server answers")


@pytest.mark.parametrize("on_error", ["fail_open", "fail_closed"])
async def test_server_never_answers(silent_url: str, on_error: str) -> None:
    # the engine's deadline ends the wait, not the 30 s request timeout
    await _check(silent_url, on_error, f"no prediction within the {DEADLINE:g} s deadline")


@pytest.mark.parametrize("on_error", ["fail_open", "fail_closed"])
async def test_server_answers_garbage(garbage_url: str, on_error: str) -> None:
    await _check(garbage_url, on_error, "not the JSON of an OpenAI-compatible API")


async def test_select_and_rollout_fail_closed_when_down() -> None:
    wm = OpenAIWorldModel("m", base_url=f"http://127.0.0.1:{dead_port()}/v1", retries=0)
    lk = Lookahead(wm, on_error="fail_closed", deadline_s=DEADLINE)
    result = await lk.select(TRAJ, ["ls", "pwd"])
    assert result.chosen is None
    rollout = await lk.rollout(TRAJ, ["ls", "pwd"])
    assert rollout.failed_at == 0
    open_lk = Lookahead(wm, on_error="fail_open", deadline_s=DEADLINE)
    opened = await open_lk.select(TRAJ, ["ls", "pwd"])
    assert opened.chosen is not None
    assert opened.chosen.kind is DecisionKind.UNSIMULATED
    await wm.aclose()
