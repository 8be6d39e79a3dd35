"""Slow HTTP clients cannot hold the MCP server's connections (`mcp` / `proxy --transport http`).

The server runs in-process over real streamable HTTP (uvicorn on a free
loopback port); the clients are real TCP sockets that send half a request,
trickle it, or stop in the middle of a body. Each test waits for the server
to close them (a generous deadline guards against a hang, nothing times the
server), then checks a well-behaved client is still served.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from anyio.abc import SocketStream

pytest.importorskip("mcp")

from aw_lookahead.mcp import build_server, serve_http
from aw_lookahead.mcp._slow_clients import timed_http_protocol
from aw_lookahead.worldmodel import FunctionWorldModel
from mcp_support import MCP_HEADERS, echo, initialize_request

HANG_GUARD_S = 120
"""Far beyond the one-second deadlines under test: only a server that never closes hits it."""

INIT = initialize_request("slow-client-test")


@asynccontextmanager
async def running() -> AsyncIterator[tuple[str, int]]:
    """The MCP tools served in-process with 1 s header and body deadlines; (url, port)."""
    ports: list[int] = []
    ready = anyio.Event()

    def on_ready(port: int) -> None:
        ports.append(port)
        ready.set()

    server = build_server(FunctionWorldModel(echo))
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            lambda: serve_http(
                server, port=0, on_ready=on_ready, header_timeout_s=1.0, body_timeout_s=1.0
            )
        )
        with anyio.fail_after(60):
            await ready.wait()
        try:
            yield f"http://127.0.0.1:{ports[0]}/mcp", ports[0]
        finally:
            tg.cancel_scope.cancel()


async def _read_until_closed(stream: SocketStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    got = b""
    while True:
        try:
            got += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
            return got


async def _served(url: str) -> int:
    async with httpx.AsyncClient(timeout=30, trust_env=False) as http:
        return (await http.post(url, json=INIT, headers=MCP_HEADERS)).status_code


async def test_400_half_sent_headers_are_answered_408_and_closed() -> None:
    async with running() as (url, port):
        streams = [await anyio.connect_tcp("127.0.0.1", port) for _ in range(400)]
        replies: list[bytes] = []
        try:
            for s in streams:
                await s.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
            with anyio.fail_after(HANG_GUARD_S):
                replies += [await _read_until_closed(s) for s in streams]
        finally:
            for s in streams:
                await s.aclose()
        assert all(r.startswith(b"HTTP/1.1 408 Request Timeout\r\n") for r in replies), replies[0]
        assert await _served(url) == 200


async def test_a_connection_that_sends_nothing_is_closed() -> None:
    async with running() as (url, port):
        stream = await anyio.connect_tcp("127.0.0.1", port)
        with anyio.fail_after(HANG_GUARD_S):
            assert (await _read_until_closed(stream)).startswith(b"HTTP/1.1 408")
        await stream.aclose()
        assert await _served(url) == 200


async def test_trickled_headers_do_not_extend_the_deadline() -> None:
    async with running() as (url, port):
        stream = await anyio.connect_tcp("127.0.0.1", port)
        await stream.send(b"POST /mcp HTTP/1.1\r\n")
        closed = anyio.Event()
        sent = 0

        async def trickle() -> None:
            nonlocal sent
            while not closed.is_set():  # a header byte every 50 ms, for as long as we may
                try:
                    await stream.send(b"X-Slow: y\r\n"[sent % 11 : sent % 11 + 1])
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    return
                sent += 1
                await anyio.sleep(0.05)

        async with anyio.create_task_group() as tg:
            tg.start_soon(trickle)
            with anyio.fail_after(HANG_GUARD_S):
                reply = await _read_until_closed(stream)
            closed.set()
        await stream.aclose()
        assert reply.startswith(b"HTTP/1.1 408"), reply
        assert sent > 0
        assert await _served(url) == 200


async def test_a_body_that_stops_halfway_is_closed() -> None:
    async with running() as (url, port):
        streams = []
        for _ in range(50):
            s = await anyio.connect_tcp("127.0.0.1", port)
            await s.send(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
                b'{"jsonrpc": "2.0", '
            )
            streams.append(s)
        try:
            with anyio.fail_after(HANG_GUARD_S):
                for s in streams:
                    await _read_until_closed(s)
        finally:
            for s in streams:
                await s.aclose()
        assert await _served(url) == 200


def test_the_deadlines_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        timed_http_protocol(0, 30)
    with pytest.raises(ValueError, match="positive"):
        timed_http_protocol(10, float("nan"))
