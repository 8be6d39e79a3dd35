"""Load: 50 concurrent client sessions through one proxy over streamable HTTP.

A counting shim sits between the proxy and the real filesystem server and
appends one line per ``tools/call`` it relays, so the test counts what the
server actually received: every forwarded call exactly once, nothing lost.
"""

from __future__ import annotations

import json
import socket
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client

from aw_lookahead.mcp import Downstream, LookaheadProxy, ProxyConfig, serve_http
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel

pytestmark = pytest.mark.integration

SESSIONS = 50
WRITES = 3  # + 1 read-only call per session

SHIM = r"""
import subprocess, sys, threading
log = open(sys.argv[1], "a", buffering=1)
child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def pump_out():
    for line in child.stdout:
        sys.stdout.buffer.write(line); sys.stdout.buffer.flush()
threading.Thread(target=pump_out, daemon=True).start()
for line in sys.stdin.buffer:
    if b'"tools/call"' in line:
        log.write(line.decode()); log.flush()
    child.stdin.write(line); child.stdin.flush()
child.stdin.close(); child.wait()
"""


def succeed(trajectory: Trajectory, action: Action) -> str:
    return "Successfully wrote the file"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_fifty_sessions_every_call_executed_once(mcp_fs_server: Path, tmp_path: Path) -> None:
    root, log, shim = tmp_path / "root", tmp_path / "calls.jsonl", tmp_path / "shim.py"
    root.mkdir()
    shim.write_text(SHIM)
    cmd = [sys.executable, str(shim), str(log), str(mcp_fs_server), str(root)]
    proxy = LookaheadProxy(Downstream(cmd), FunctionWorldModel(succeed), ProxyConfig())
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    results: list[Any] = []

    async def session(i: int) -> None:
        async with Client(url, mode="legacy", read_timeout_seconds=120) as client:
            await client.list_tools()
            for j in range(WRITES):
                path = str(root / f"s{i}_{j}.txt")
                results.append(
                    await client.call_tool("write_file", {"path": path, "content": path})
                )
            results.append(await client.call_tool("list_directory", {"path": str(root)}))

    ready = anyio.Event()
    async with proxy, anyio.create_task_group() as server_tg:
        server_tg.start_soon(
            lambda: serve_http(proxy.server, port=port, on_ready=lambda _: ready.set())
        )
        with anyio.fail_after(30):
            await ready.wait()
        with anyio.fail_after(240):
            async with anyio.create_task_group() as tg:
                for i in range(SESSIONS):
                    tg.start_soon(session, i)
        server_tg.cancel_scope.cancel()

    total = SESSIONS * (WRITES + 1)
    assert len(results) == total
    assert not [r for r in results if r.is_error]
    received = [json.loads(line) for line in log.read_text().splitlines()]
    keys = Counter(
        (r["params"]["name"], json.dumps(r["params"]["arguments"], sort_keys=True))
        for r in received
    )
    writes = {k: n for k, n in keys.items() if k[0] == "write_file"}
    assert len(writes) == SESSIONS * WRITES
    assert set(writes.values()) == {1}  # each write reached the server exactly once
    looks = [r for r in received if r["params"]["name"] == "get_file_info"]  # read-only looks
    assert len(looks) == total  # one per call: the folder a write goes into, the listed one
    assert len(received) - len(looks) == total == proxy.downstream.forwarded
    files = sorted(p.name for p in root.iterdir())
    assert len(files) == SESSIONS * WRITES
    assert all((root / f).read_text() == str(root / f) for f in files)
