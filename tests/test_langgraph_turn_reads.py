"""A call checked again with the real results of the read-only calls before it in its turn.

Real ``create_agent`` graphs over a real sandboxed bash; the world model is a
deterministic environment model that, like a trained one, reads a listing in
its history: it predicts ``cat NAME`` fails when the last ``ls`` it saw does
not list NAME, and succeeds when it saw none.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from aw_lookahead.langgraph import LookaheadMiddleware
from aw_lookahead.lookahead import Lookahead
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel
from langgraph_support import (
    CAT_MISSING,
    LS,
    RM_DATA,
    TASK,
    ShellTool,
    command_of,
    policy,
    thread_config,
    tool_messages,
    turn,
)

CAT_NOTES = "cat notes.txt"


class ListingReader:
    """Predicts ``cat`` from the last real listing in the history; keeps what it was shown."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str]]] = []

    def __call__(self, trajectory: Trajectory, action: Action) -> str:
        cmd = command_of(action)
        listings = [t.observation for t in trajectory.turns if command_of(t.action) == LS]
        self.seen.append((cmd, listings))
        if cmd.startswith("rm -rf"):
            return f"$ {cmd}\nremoved directory 'data'\n"
        if cmd.startswith("cat "):
            name = cmd.split()[1]
            if listings and name not in listings[-1]:
                return f"$ {cmd}\ncat: {name}: No such file or directory\n"
            return f"$ {cmd}\nsome text\n"
        return f"$ {cmd}\ndata\n"


def _agent(shell: ShellTool, mw: LookaheadMiddleware, *commands: str) -> Any:
    shell.sandbox.write_file("notes.txt", "meeting at 10\n")
    model = policy(turn(*commands), AIMessage("Done."))
    return create_agent(model, [shell.tool()], middleware=[mw], checkpointer=InMemorySaver())


def _by_command(out: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    records: dict[str, list[dict[str, Any]]] = {}
    for rec in out["lookahead"]:
        records.setdefault(command_of(rec["decision"]["action"]), []).append(rec)
    return records


@pytest.mark.parametrize("blocking", [True, False], ids=["invoke", "ainvoke"])
async def test_a_read_after_ls_in_the_same_turn_is_judged_against_the_real_listing(
    shell: ShellTool, blocking: bool
) -> None:
    reader = ListingReader()
    mw = LookaheadMiddleware(FunctionWorldModel(reader, model_id="listing-reader"))
    agent = _agent(shell, mw, LS, CAT_NOTES, CAT_MISSING, RM_DATA)
    args = ({"messages": [("user", TASK)]}, thread_config())
    out = agent.invoke(*args) if blocking else await agent.ainvoke(*args)

    assert shell.executed == {LS: 1, CAT_NOTES: 1}
    assert shell.sandbox.run_sync("test -d data && echo kept").output.strip() == "kept"
    records = _by_command(out)
    first, again = records[CAT_MISSING]
    assert (first["executes"], "recheck" in first) == (True, False)
    assert (again["kind"], again["executes"], again["recheck"]) == ("veto", False, True)
    [notes_first, notes_again] = records[CAT_NOTES]
    assert (notes_first["executes"], notes_again["executes"], notes_again["recheck"]) == (
        True,
        True,
        True,
    )
    assert [r.get("recheck") for r in records[LS]] == [None]
    assert [r["executes"] for r in records[RM_DATA]] == [False]
    answers = {m.tool_call_id: m for m in tool_messages(out["messages"])}
    calls = out["messages"][1].tool_calls
    missing_call = next(c for c in calls if c["args"]["command"] == CAT_MISSING)
    veto = answers[missing_call["id"]]
    assert veto.status == "error"
    assert "NOT executed" in str(veto.content)
    assert "No such file" in str(veto.content)
    # the second look was given the real listing, which names notes.txt and data
    [(_, listings)] = [(c, ls) for c, ls in reader.seen if c == CAT_MISSING and ls]
    assert "notes.txt" in listings[-1]
    assert "data" in listings[-1]


async def test_without_recheck_the_batch_decision_stands(shell: ShellTool) -> None:
    reader = ListingReader()
    mw = LookaheadMiddleware(
        FunctionWorldModel(reader, model_id="listing-reader"), recheck_after_reads=False
    )
    out = await _agent(shell, mw, LS, CAT_MISSING).ainvoke(
        {"messages": [("user", TASK)]}, thread_config()
    )
    assert shell.executed == {LS: 1, CAT_MISSING: 1}
    assert all("recheck" not in r for r in out["lookahead"])


async def test_only_reads_before_a_call_are_waited_for(shell: ShellTool) -> None:
    reader = ListingReader()
    mw = LookaheadMiddleware(FunctionWorldModel(reader, model_id="listing-reader"))
    out = await _agent(shell, mw, CAT_MISSING, LS).ainvoke(
        {"messages": [("user", TASK)]}, thread_config()
    )
    assert shell.executed == {LS: 1, CAT_MISSING: 1}
    assert [r.get("recheck") for r in _by_command(out)[CAT_MISSING]] == [None]


async def test_a_read_not_back_by_the_deadline_is_left_out(shell: ShellTool) -> None:
    reader = ListingReader()
    slow_read = "tail -f notes.txt"  # read-only; runs until the tool's 10 s timeout
    engine = Lookahead(FunctionWorldModel(reader, model_id="listing-reader"), deadline_s=1.0)
    out = await _agent(shell, LookaheadMiddleware(engine), slow_read, CAT_MISSING).ainvoke(
        {"messages": [("user", TASK)]}, thread_config()
    )
    # the second look ran without the listing (it outlasts the 1 s wait) and allowed it
    assert shell.executed == {slow_read: 1, CAT_MISSING: 1}
    [_, again] = _by_command(out)[CAT_MISSING]
    assert (again["recheck"], again["executes"]) == (True, True)
