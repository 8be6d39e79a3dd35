"""MCP tools judged by everything they say, with the world model down (issue 46, item 3).

The corpus (``mcp_tool_corpus_support``) runs twice with a world model that nothing
answers (an ``OpenAIWorldModel`` on a free port, the default ``on_error``): through the
engine, and through the real ``aw-lookahead proxy --mode gate`` CLI over stdio in front
of a real MCP server (``mcp_declared_server.py``) that declares the corpus tools and
writes every call it receives to a ledger. No destructive call may run or reach the
server; every harmless call must.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from aw_lookahead.lookahead import DecisionKind, Lookahead
from aw_lookahead.lookahead.tool_effects import tool_risk
from aw_lookahead.trajectory import Trajectory
from aw_lookahead.worldmodel import OpenAIWorldModel
from mcp_tool_corpus_support import DESTRUCTIVE, HARMLESS, TOOLS, Call

AW = str(Path(sys.executable).with_name("aw-lookahead"))
SERVER = Path(__file__).with_name("mcp_declared_server.py")
BY_NAME = {t["name"]: t for t in TOOLS}


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _label(call: Call) -> str:
    return f"{call[0]}({json.dumps(call[1], sort_keys=True)})"


def test_corpus_size_and_every_tool_declared() -> None:
    assert len(DESTRUCTIVE) >= 45
    assert len(HARMLESS) >= 30
    assert {name for name, _ in DESTRUCTIVE + HARMLESS} <= set(BY_NAME)


@pytest.mark.parametrize("call", DESTRUCTIVE, ids=_label)
def test_destructive_calls_are_not_read_only(call: Call) -> None:
    name, arguments = call
    risk = tool_risk(BY_NAME[name], name, arguments)
    assert risk.kind in ("destroys", "unknown"), risk


@pytest.mark.parametrize("call", HARMLESS, ids=_label)
def test_harmless_calls_stay_runnable(call: Call) -> None:
    name, arguments = call
    risk = tool_risk(BY_NAME[name], name, arguments)
    assert risk.kind in ("read_only", "non_destructive"), risk


async def test_engine_with_the_model_down_blocks_the_corpus_and_runs_the_harmless() -> None:
    wm = OpenAIWorldModel("m", base_url=_dead_url(), retries=0, timeout=10)
    lk = Lookahead(wm)  # default on_error: fail_safe
    trajectory = Trajectory(domain="mcp", tools=TOOLS)
    ran: list[str] = []
    for name, arguments in DESTRUCTIVE:
        [d] = await lk.gate(trajectory, [{"name": name, "arguments": arguments}])
        if d.executes:
            ran.append(_label((name, arguments)))
        else:
            assert "could not be checked" in d.reason
    blocked: list[str] = []
    for name, arguments in HARMLESS:
        [d] = await lk.gate(trajectory, [{"name": name, "arguments": arguments}])
        if not d.executes:
            blocked.append(f"{_label((name, arguments))}: {d.reason}")
    assert (ran, blocked) == ([], []), (
        f"{len(ran)} of {len(DESTRUCTIVE)} destructive calls ran: {ran}; "
        f"{len(blocked)} of {len(HARMLESS)} harmless calls blocked: {blocked}"
    )


def _text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.integration
async def test_proxy_gate_with_the_model_down_forwards_only_the_harmless(
    tmp_path: Path,
) -> None:
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters

    tools_file, ledger = tmp_path / "tools.json", tmp_path / "ledger.jsonl"
    tools_file.write_text(json.dumps(TOOLS))
    args = ["proxy", "--mode", "gate", "--base-url", _dead_url(), "--model", "m"]
    args += ["--timeout", "10", "--", sys.executable, str(SERVER), str(tools_file), str(ledger)]
    env = dict(os.environ)  # PYTHONPATH too: the proxy runs the sources under test
    params = StdioServerParameters(command=AW, args=args, cwd=str(tmp_path), env=env)
    errors: dict[str, str] = {}
    with anyio.fail_after(300):
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            for call in DESTRUCTIVE + HARMLESS:
                result = await client.call_tool(call[0], call[1])
                if result.is_error:
                    errors[_label(call)] = _text(result)
    assert listed == set(BY_NAME)
    received = (
        [json.loads(line) for line in ledger.read_text().splitlines()] if ledger.exists() else []
    )
    forwarded = {_label((r["name"], r["arguments"] or {})) for r in received}
    leaked = [_label(c) for c in DESTRUCTIVE if _label(c) in forwarded]
    refused = [
        f"{_label(c)}: {errors.get(_label(c))}" for c in HARMLESS if _label(c) not in forwarded
    ]
    assert (leaked, refused) == ([], []), (
        f"{len(leaked)} of {len(DESTRUCTIVE)} destructive calls forwarded: {leaked}; "
        f"{len(refused)} of {len(HARMLESS)} harmless calls refused: {refused}"
    )
    assert all("could not be checked" in errors[_label(c)] for c in DESTRUCTIVE)


@pytest.mark.parametrize(
    ("description", "kind"),
    [
        ("Returns the status and deletes all cached records.", "destroys"),
        ("Returns the status. It never fails, and deletes all cached records.", "destroys"),
        ("Messages will be permanently removed once read.", "destroys"),
        ("Shows the log, then truncates the log table.", "destroys"),
        ("Describes the store. This action cannot be undone.", "destroys"),
        ("Returns the status. It never deletes or modifies anything.", "read_only"),
        ("Shows files that were removed from the workspace.", "read_only"),
        ("Reads a file. To remove it, use delete_file.", "read_only"),
        ("Returns the quota and when it resets; long lines are truncated.", "read_only"),
        ("A non-destructive read of the table.", "read_only"),
    ],
)
def test_the_whole_description_is_read_clause_by_clause(description: str, kind: str) -> None:
    tool = {"name": "get_status", "description": description, "inputSchema": {}}
    assert tool_risk(tool, "get_status", {}).kind == kind


def test_what_cannot_be_read_may_write() -> None:
    """An argument too long or too deep to read, or a description too long, is not read-only."""
    tool = {"name": "search", "description": "Searches.", "inputSchema": {}}
    assert tool_risk(tool, "search", {"query": "a" * 300_000}).kind == "unknown"
    deep: dict[str, object] = {"q": "x"}
    for _ in range(40):
        deep = {"n": deep}
    assert tool_risk(tool, "search", deep).kind == "unknown"
    long = {**tool, "description": "Searches. " * 10_000}
    assert tool_risk(long, "search", {"query": "x"}).kind == "destroys"
    assert tool_risk(tool, "search", {"query": "a" * 1000}).kind == "read_only"


def test_router_never_skips_a_tool_that_says_it_is_destructive() -> None:
    from aw_lookahead.lookahead.routing import RiskRouter

    both = {"name": "peek", "annotations": {"readOnlyHint": True, "destructiveHint": True}}
    plain = {"name": "read", "annotations": {"readOnlyHint": True}}
    trajectory = Trajectory(domain="mcp", tools=[both, plain])
    router = RiskRouter()
    assert not router.route(trajectory, {"name": "peek", "arguments": {}}).read_only
    assert router.route(trajectory, {"name": "read", "arguments": {}}).read_only


async def test_sql_a_tool_stores_is_a_write_not_a_destruction() -> None:
    """A SQL file's content or an issue body quoting DROP TABLE is stored, not run: with a
    model predicting success it runs; with the model down it is still blocked (it writes)."""
    from aw_lookahead.worldmodel import FunctionWorldModel

    tools = [{"name": "write_file", "description": "Writes a file.", "inputSchema": {}}]
    trajectory = Trajectory(domain="mcp", tools=tools)
    stored = {"name": "write_file", "arguments": {"path": "m.sql", "content": "DROP TABLE old;"}}
    ran = {"name": "write_file", "arguments": {"path": "m.sql", "sql": "DROP TABLE old;"}}
    up = Lookahead(FunctionWorldModel(lambda _t, _a: "Wrote m.sql", model_id="ok"))
    assert [d.kind for d in await up.gate(trajectory, [stored, ran])] == [
        DecisionKind.EXECUTE,
        DecisionKind.VETO,
    ]
    down = Lookahead(OpenAIWorldModel("m", base_url=_dead_url(), retries=0, timeout=10))
    [d] = await down.gate(trajectory, [stored])
    assert d.kind is DecisionKind.VETO
