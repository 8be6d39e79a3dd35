"""HTTP hardening of `aw-lookahead mcp` / `proxy`: tokens, non-loopback binds, Host/Origin checks.

Servers run over real streamable HTTP (uvicorn on a free port, in-process or
as the console script); requests are real HTTP requests.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from aw_lookahead.cli import main
from aw_lookahead.errors import ConfigError
from aw_lookahead.mcp import build_server, http_app, serve_http
from aw_lookahead.worldmodel import FunctionWorldModel
from mcp_support import MCP_HEADERS, echo, initialize_request, start_http

AW = str(Path(sys.executable).with_name("aw-lookahead"))
TOKEN = "9f2c1e7a-test-token"
INIT = initialize_request("security-test")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def running(**kwargs: Any) -> AsyncIterator[str]:
    """Serve the MCP tools in-process over HTTP; yield the loopback URL."""
    server = build_server(FunctionWorldModel(echo))
    ports: list[int] = []
    ready = anyio.Event()

    def on_ready(port: int) -> None:
        ports.append(port)
        ready.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve_http(server, port=0, on_ready=on_ready, **kwargs))
        with anyio.fail_after(60):
            await ready.wait()
        try:
            yield f"http://127.0.0.1:{ports[0]}/mcp"
        finally:
            tg.cancel_scope.cancel()


async def initialize(url: str, headers: dict[str, str]) -> int:
    async with httpx.AsyncClient(timeout=30, trust_env=False) as http:
        response = await http.post(url, json=INIT, headers={**MCP_HEADERS, **headers})
        return response.status_code


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(argv)
    return rc, capsys.readouterr().err


# --------------------------------------------------------------------------- refused at start


@pytest.mark.parametrize("verb", [["mcp"], ["proxy", "--", "true"]])
def test_empty_token_is_refused(
    verb: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AW_LOOKAHEAD_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("AW_LOOKAHEAD_MCP_TOKEN", raising=False)
    rc, err = run_cli([*verb[:1], "--transport", "http", "--auth-token", "", *verb[1:]], capsys)
    assert rc == 2
    assert "--auth-token is empty" in err
    monkeypatch.setenv("AW_LOOKAHEAD_AUTH_TOKEN", "  ")
    rc, err = run_cli([*verb[:1], "--transport", "http", *verb[1:]], capsys)
    assert rc == 2
    assert "AW_LOOKAHEAD_AUTH_TOKEN is empty" in err
    with pytest.raises(ConfigError, match="empty"):
        http_app(build_server(FunctionWorldModel(echo)), auth_token="")


@pytest.mark.parametrize("verb", [["mcp"], ["proxy", "--", "true"]])
def test_short_token_is_refused_at_start(
    verb: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AW_LOOKAHEAD_MCP_TOKEN", raising=False)
    monkeypatch.setenv("AW_LOOKAHEAD_AUTH_TOKEN", "x")
    rc, err = run_cli([*verb[:1], "--transport", "http", *verb[1:]], capsys)
    assert rc == 2
    assert err.count("\n") == 1, err
    assert "AW_LOOKAHEAD_AUTH_TOKEN is 1 character long; a token must have at least 16" in err
    with pytest.raises(ConfigError, match="at least 16"):
        http_app(build_server(FunctionWorldModel(echo)), auth_token="a" * 15)
    http_app(build_server(FunctionWorldModel(echo)), auth_token="a" * 16)


@pytest.mark.parametrize("verb", [["mcp"], ["proxy", "--", "true"]])
def test_non_loopback_bind_without_token_is_refused(
    verb: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AW_LOOKAHEAD_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("AW_LOOKAHEAD_MCP_TOKEN", raising=False)
    rc, err = run_cli([verb[0], "--transport", "http", "--host", "0.0.0.0", *verb[1:]], capsys)
    assert rc == 2
    assert "--allow-unauthenticated" in err
    assert err.count("\n") == 1
    with pytest.raises(ConfigError, match="reachable from other machines"):
        http_app(build_server(FunctionWorldModel(echo)), host="0.0.0.0")


def test_http_without_token_logs_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    server = build_server(FunctionWorldModel(echo))
    with caplog.at_level(logging.WARNING, logger="aw_lookahead.mcp"):
        http_app(server)
        http_app(server, host="0.0.0.0", allow_unauthenticated=True)
        http_app(server, auth_token=TOKEN)
    warned = [r for r in caplog.records if "without a bearer token" in r.getMessage()]
    assert [r.levelno for r in warned] == [logging.WARNING, logging.WARNING]


# --------------------------------------------------------------------------- real HTTP


async def test_bearer_scheme_is_case_insensitive_and_token_exact() -> None:
    async with running(auth_token=TOKEN) as url:
        assert await initialize(url, {}) == 401
        assert await initialize(url, {"Authorization": f"Bearer {TOKEN}x"}) == 401
        assert await initialize(url, {"Authorization": f"Basic {TOKEN}"}) == 401
        assert await initialize(url, {"Authorization": TOKEN}) == 401
        for scheme in ("Bearer", "bearer", "BEARER"):
            assert await initialize(url, {"Authorization": f"{scheme} {TOKEN}"}) == 200


async def test_non_loopback_bind_checks_host_and_origin() -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with running(
        host="0.0.0.0",
        auth_token=TOKEN,
        allowed_hosts=["mcp.internal:*"],
        allowed_origins=["https://app.example"],
    ) as url:
        port = url.split(":")[2].split("/")[0]
        assert await initialize(url, auth) == 200  # Host: 127.0.0.1:<port>
        assert await initialize(url, {**auth, "Host": "attacker.example"}) == 421
        assert await initialize(url, {**auth, "Host": f"attacker.example:{port}"}) == 421
        assert await initialize(url, {**auth, "Host": f"mcp.internal:{port}"}) == 200
        evil = {**auth, "Origin": "http://attacker.example"}
        assert await initialize(url, evil) == 403
        assert await initialize(url, {**auth, "Origin": "https://app.example"}) == 200
        assert await initialize(url, {**auth, "Origin": f"http://127.0.0.1:{port}"}) == 200
        # a real MCP session through the checks
        async with (
            httpx2.AsyncClient(headers=auth, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):
            result = await client.call_tool("simulate", {"action": "ls"})
        assert not result.is_error


async def test_loopback_bind_also_refuses_foreign_host() -> None:
    async with running() as url:
        assert await initialize(url, {}) == 200
        assert await initialize(url, {"Host": "attacker.example"}) == 421


@pytest.mark.integration
@pytest.mark.parametrize("variable", ["AW_LOOKAHEAD_AUTH_TOKEN", "AW_LOOKAHEAD_MCP_TOKEN"])
async def test_token_from_the_environment(tmp_path: Path, variable: str) -> None:
    port = _free_port()
    env = {**os.environ, variable: TOKEN,
           "AW_LOOKAHEAD_BASE_URL": "http://127.0.0.1:9/v1", "AW_LOOKAHEAD_MODEL": "m"}  # fmt: skip
    log = tmp_path / "server.log"
    proc = start_http([AW, "mcp", "--transport", "http", "--port", str(port)], env, log)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        assert await initialize(url, {}) == 401
        assert await initialize(url, {"Authorization": f"bearer {TOKEN}"}) == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert "bearer token required" in text
    assert TOKEN not in text
    assert "without a bearer token" not in text
