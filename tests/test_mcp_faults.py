"""Downstream faults through the real proxy CLI: a hanging call.

The issue's rule: a downstream crash or hang gives that call one clear MCP
error, the proxy stays up and restarts the downstream, and no call is ever
forwarded twice. The crash path is in ``test_mcp_proxy.py``; this file runs
the hang path end to end over stdio on both sides: client -> ``aw-lookahead
proxy --call-timeout`` (subprocess) -> a real ``MCPServer`` (subprocess)
whose ``work`` tool sleeps forever when asked to. Every tool invocation the
server receives is appended to a ledger file with the server's pid, so the
test reads what the server actually ran, and in which process.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.integration

AW = str(Path(sys.executable).with_name("aw-lookahead"))
CALL_TIMEOUT_S = 2.0
SLACK_S = 20.0  # process start-up and scheduling on shared CPUs; the point is "bounded"

SERVER = r'''
import os, sys
import anyio
from mcp.server import MCPServer
from mcp.types import ToolAnnotations

LEDGER = sys.argv[1]
server = MCPServer("hang-test")
READ_ONLY = ToolAnnotations(read_only_hint=True)  # gate mode forwards without a prediction


def note(line: str) -> None:
    with open(LEDGER, "a") as f:
        f.write(f"{os.getpid()} {line}\n")


@server.tool(annotations=READ_ONLY)
async def work(label: str, hang: bool = False) -> str:
    """Note the call; with hang=true never answer."""
    note(f"work {label}")
    if hang:
        await anyio.sleep_forever()
    return f"worked {label}"


@server.tool(annotations=READ_ONLY)
def record(label: str) -> str:
    """Note the call and answer at once."""
    note(f"record {label}")
    return f"recorded {label}"


server.run()
'''


def text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def dead_url() -> str:
    """A base URL nothing listens on: the world model must never be needed here."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def ledger(path: Path) -> list[tuple[str, str]]:
    """(pid, "tool label") per invocation the downstream server received."""
    if not path.exists():
        return []
    return [tuple(line.split(" ", 1)) for line in path.read_text().splitlines()]  # type: ignore[misc]


async def test_hanging_call_errors_once_and_proxy_restarts_downstream(tmp_path: Path) -> None:
    script, calls = tmp_path / "server.py", tmp_path / "calls.txt"
    script.write_text(SERVER)
    args = ["proxy", "--mode", "gate", "--call-timeout", str(CALL_TIMEOUT_S)]
    args += ["--base-url", dead_url(), "--model", "unused", "--timeout", "5"]
    args += ["--", sys.executable, str(script), str(calls)]
    params = StdioServerParameters(command=AW, args=args, cwd=str(tmp_path))
    with anyio.fail_after(120):
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            first = await client.call_tool("record", {"label": "before"})
            started = time.monotonic()
            hung = await client.call_tool("work", {"label": "stuck", "hang": True})
            hang_s = time.monotonic() - started
            after = await client.call_tool("record", {"label": "after"})
            again = await client.call_tool("work", {"label": "quick"})
            final = ledger(calls)  # read while the proxy is still up
            stuck_alive = alive(int(final[1][0]))

    assert not first.is_error
    assert text(first) == "recorded before"
    assert hung.is_error
    message = text(hung)
    assert message.startswith("[aw-lookahead proxy]")
    assert "did not answer 'work' within 2 s" in message
    assert "being restarted" in message
    assert "NOT retried" in message
    assert CALL_TIMEOUT_S <= hang_s < CALL_TIMEOUT_S + SLACK_S
    assert not after.is_error
    assert text(after) == "recorded after"
    assert not again.is_error
    assert text(again) == "worked quick"

    lines = [line for _, line in final]
    assert lines == ["record before", "work stuck", "record after", "work quick"]
    assert lines.count("work stuck") == 1  # the hanging call was sent once, never retried
    pids = [pid for pid, _ in final]
    assert pids[0] == pids[1]  # the hang happened in the first server process
    assert pids[2] == pids[3] != pids[0]  # the next calls ran in a restarted one
    assert not stuck_alive  # the hung server was stopped, not leaked
    assert ledger(calls) == final  # nothing re-sent while the proxy shut down
