"""The README's two-line create_agent snippet when the world model cannot answer.

A real sandboxed shell, a scripted policy (read a missing file, ``rm -rf data``,
``ls``) and ``LookaheadMiddleware(OpenAIWorldModel())`` with a dead URL, with
the environment variable unset, and with a server that never answers within
the deadline. Whatever the cause: ``rm -rf`` never runs, the harmless calls
run, a warning names the cause and the remedy, and the agent sees a note on
each call that ran unchecked.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage

from aw_lookahead.langgraph import LookaheadMiddleware
from aw_lookahead.worldmodel import OpenAIWorldModel
from langgraph_support import (
    CAT_MISSING,
    LS,
    RM_DATA,
    ShellTool,
    policy,
    tool_messages,
    turn,
)

NOTE = "[lookahead] Note: this ran WITHOUT a lookahead check"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A port that accepts connections (kernel backlog) but never answers a byte."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        yield f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _run_snippet(shell: ShellTool, middleware: LookaheadMiddleware) -> dict[str, Any]:
    model = policy(turn(CAT_MISSING, RM_DATA, LS), AIMessage("done"))
    agent = create_agent(model, [shell.tool()], middleware=[middleware])
    return dict(agent.invoke({"messages": [("user", "Summarise data/")]}))


def _check(
    shell: ShellTool, out: dict[str, Any], caplog: pytest.LogCaptureFixture, cause: str
) -> None:
    assert RM_DATA not in shell.executed
    assert shell.sandbox.run_sync("test -d data && echo kept").output.strip() == "kept"
    assert shell.executed == {CAT_MISSING: 1, LS: 1}
    kinds = {r["decision"]["action"][0]["keystrokes"].strip(): r["kind"] for r in out["lookahead"]}
    assert kinds == {CAT_MISSING: "unsimulated", RM_DATA: "veto", LS: "unsimulated"}
    answers = {m.tool_call_id: m for m in tool_messages(out["messages"])}
    by_command = {
        c["args"]["command"]: answers[c["id"]]
        for m in out["messages"]
        if isinstance(m, AIMessage)
        for c in m.tool_calls
    }
    assert NOTE in str(by_command[LS].content)
    assert NOTE in str(by_command[CAT_MISSING].content)
    veto = str(by_command[RM_DATA].content)
    assert by_command[RM_DATA].status == "error"
    assert "could not be checked" in veto
    assert "NOT executed" in veto
    warnings = [
        r for r in caplog.records if r.name == "aw_lookahead" and r.levelno == logging.WARNING
    ]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]  # once per cause
    assert cause in warnings[0].getMessage()
    assert "To fix:" in warnings[0].getMessage()


def test_dead_url(
    shell: ShellTool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("AW_LOOKAHEAD_BASE_URL", f"http://127.0.0.1:{_free_port()}/v1")
    out = _run_snippet(shell, LookaheadMiddleware(OpenAIWorldModel()))
    _check(shell, out, caplog, "unreachable")


def test_unset_environment(
    shell: ShellTool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("AW_LOOKAHEAD_BASE_URL", "AW_LOOKAHEAD_MODEL", "AW_LOOKAHEAD_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 8000)) == 0:
            pytest.skip("something listens on the default port 8000; this case needs it free")
    out = _run_snippet(shell, LookaheadMiddleware(OpenAIWorldModel()))
    _check(shell, out, caplog, "unreachable")


def test_world_model_slower_than_the_deadline(
    shell: ShellTool, silent_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    wm = OpenAIWorldModel("m", base_url=silent_url, timeout=30.0)
    out = _run_snippet(shell, LookaheadMiddleware(wm, deadline_s=1.0))
    _check(shell, out, caplog, "deadline")


def test_world_model_timeout_is_reported_by_the_client(
    shell: ShellTool, silent_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Default deadline = client timeout + 5 s: the client's own timeout error (with its
    # remedy) arrives first.
    mw = LookaheadMiddleware(OpenAIWorldModel("m", base_url=silent_url, timeout=1.0))
    assert mw.engine.deadline_s > 1.0
    out = _run_snippet(shell, mw)
    _check(shell, out, caplog, "timeout")
    assert mw.engine.stats.unchecked == 2
    assert mw.engine.stats.blocked_unchecked == 1


def test_note_can_be_switched_off(shell: ShellTool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AW_LOOKAHEAD_BASE_URL", f"http://127.0.0.1:{_free_port()}/v1")
    out = _run_snippet(shell, LookaheadMiddleware(OpenAIWorldModel(), note_unchecked=False))
    assert RM_DATA not in shell.executed
    assert not any(NOTE in str(m.content) for m in tool_messages(out["messages"]))
