"""Destructive by effect through the real adapters: LangGraph middleware and the MCP proxy.

LangGraph: ``create_agent`` with ``LookaheadMiddleware(OpenAIWorldModel())`` on a dead
URL, a scripted policy, and the real sandboxed shell tool; wrapped and indirect
deletions of ``data/`` never run, harmless commands do. MCP: the proxy in front of a
real Python MCP server whose tools carry no annotations; with the world model down
the read-only-looking tool runs and the deleting ones are never forwarded, and with a
model predicting success ``delete_path(recursive=True)`` and an HTTP ``DELETE`` are
still vetoed.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.errors import ServerUnreachableError
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel, OpenAIWorldModel
from shell_corpus_support import DESTROYS

pytestmark = pytest.mark.integration

# Destroying corpus lines confined to the sandbox's own data/ (safe even if one ran).
_OUTSIDE = ("kill", "sudo", "ssh", "docker", "kubectl", "~", "/tmp", "/srv", "/dev/", "curl")
CONFINED = [
    line
    for line in DESTROYS
    if "data" in line and "\n" not in line and not any(w in line for w in _OUTSIDE)
][:40]
SAFE_HARMLESS = ["ls", "cat data/a.txt", "grep -c alpha data/a.txt", "echo rm -rf data", "pwd"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_langgraph_middleware_with_the_model_down(shell: Any) -> None:
    pytest.importorskip("langchain")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage

    from aw_lookahead.langgraph import LookaheadMiddleware
    from langgraph_support import policy, turn

    assert len(CONFINED) >= 30
    wm = OpenAIWorldModel("m", base_url=f"http://127.0.0.1:{_free_port()}/v1", retries=0)
    model = policy(turn(*CONFINED, *SAFE_HARMLESS), AIMessage("done"))
    agent = create_agent(model, [shell.tool()], middleware=[LookaheadMiddleware(wm)])
    agent.invoke({"messages": [("user", "Summarise data/")]})
    ran_destructive = [c for c in CONFINED if c in shell.executed]
    assert not ran_destructive
    assert set(shell.executed) == set(SAFE_HARMLESS)
    assert shell.sandbox.run_sync("cat data/a.txt data/b.txt").output.strip() == "alpha\nbeta"


DOWNSTREAM = '''
import json, sys
from mcp.server import MCPServer

server = MCPServer("unannotated")
LOG = sys.argv[1]


def _log(name, **args):
    with open(LOG, "a") as fh:
        fh.write(json.dumps({"tool": name, **args}) + "\\n")


@server.tool()
def get_weather(city: str) -> str:
    """Current weather for a city."""
    _log("get_weather", city=city)
    return f"sunny in {city}"


@server.tool()
def delete_path(path: str, recursive: bool = False) -> str:
    """Remove a path."""
    _log("delete_path", path=path, recursive=recursive)
    return f"removed {path}"


@server.tool()
def http_request(url: str, method: str = "GET") -> str:
    """Send an HTTP request."""
    _log("http_request", url=url, method=method)
    return "200 OK"


server.run("stdio")
'''


def _down(_t: Trajectory, _a: Action) -> str:
    raise ServerUnreachableError("http://127.0.0.1:9/v1")


@pytest.mark.parametrize("model", ["down", "always_ok"])
async def test_mcp_proxy_judges_unannotated_tools_by_effect(tmp_path: Path, model: str) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from aw_lookahead.mcp import Downstream, LookaheadProxy, ProxyConfig

    script = tmp_path / "server.py"
    script.write_text(DOWNSTREAM)
    log = tmp_path / "executed.jsonl"
    predict = _down if model == "down" else (lambda _t, _a: "done")
    proxy = LookaheadProxy(
        Downstream([sys.executable, str(script), str(log)]),
        FunctionWorldModel(predict),
        ProxyConfig(simulate="always"),
    )
    async with proxy, Client(proxy.server) as client:
        weather = await client.call_tool("get_weather", {"city": "Oslo"})
        delete = await client.call_tool("delete_path", {"path": "data", "recursive": True})
        http_delete = await client.call_tool(
            "http_request", {"url": "http://127.0.0.1:9/items/1", "method": "DELETE"}
        )
    assert not weather.is_error
    assert delete.is_error
    assert http_delete.is_error
    executed = [json.loads(line)["tool"] for line in log.read_text().splitlines()]
    assert executed == ["get_weather"]
    text = " ".join(getattr(c, "text", "") for c in delete.content)
    assert "delete" in text
    if model == "down":
        assert "could not be checked" in text
