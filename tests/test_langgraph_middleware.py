"""LookaheadMiddleware in a real create_agent graph (gate and select, sync and async)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from aw_lookahead.langgraph import VETO_ID_PREFIX, LookaheadMiddleware
from aw_lookahead.lookahead import Lookahead
from aw_lookahead.worldmodel import FunctionWorldModel, OpenAIWorldModel
from langgraph_support import (
    CAT_MISSING,
    LS,
    RM_DATA,
    TASK,
    ShellTool,
    policy,
    thread_config,
    tool_messages,
    turn,
    world_model,
)


def _gate_agent(shell: ShellTool, mw: LookaheadMiddleware) -> Any:
    model = policy(turn(CAT_MISSING, RM_DATA, LS), AIMessage("Done: data/ holds a.txt, b.txt."))
    return create_agent(model, [shell.tool()], middleware=[mw], checkpointer=InMemorySaver())


def _check_gate_run(shell: ShellTool, out: dict[str, Any]) -> None:
    # The tool-side counter: vetoed calls never ran, the approved one ran exactly once.
    assert shell.executed == {LS: 1}
    assert shell.sandbox.run_sync("test -d data && echo kept").output.strip() == "kept"
    records = out["lookahead"]
    assert [(r["kind"], r["executes"]) for r in records] == [
        ("veto", False),
        ("veto", False),
        ("execute", True),
    ]
    answers = tool_messages(out["messages"])
    vetoes = [m for m in answers if m.status == "error"]
    assert len(vetoes) == 2
    assert all(str(m.id).startswith(VETO_ID_PREFIX) for m in vetoes)
    assert [m.content for m in answers if m.status == "success"] == ["$ ls\ndata\n"]
    assert out["messages"][-1].content.startswith("Done")


def test_gate_sync_vetoes_predicted_failures(shell: ShellTool) -> None:
    agent = _gate_agent(shell, LookaheadMiddleware(world_model()))
    out = agent.invoke({"messages": [("user", TASK)]}, thread_config())
    _check_gate_run(shell, out)


async def test_gate_async_vetoes_predicted_failures(shell: ShellTool) -> None:
    agent = _gate_agent(shell, LookaheadMiddleware(world_model()))
    out = await agent.ainvoke({"messages": [("user", TASK)]}, thread_config())
    _check_gate_run(shell, out)


def test_veto_message_reads_as_an_instruction(shell: ShellTool) -> None:
    agent = _gate_agent(shell, LookaheadMiddleware(world_model()))
    out = agent.invoke({"messages": [("user", TASK)]}, thread_config())
    veto = next(m for m in tool_messages(out["messages"]) if m.status == "error")
    text = str(veto.content)
    print(f"\n--- veto ToolMessage the model sees ---\n{text}")  # shown with -s
    assert text == (
        '[lookahead] Blocked before execution: {"name": "shell", "arguments": '
        '{"command": "cat missing.txt"}}\n'
        "Predicted result:\n$ cat missing.txt\ncat: missing.txt: No such file or directory\n"
        "Why: a path does not exist (shell.no_such_file)\n"
        "Evidence: shell.no_such_file: 'cat: missing.txt: No such file or directory'\n"
        "The action was NOT executed. It is predicted to fail: check names, paths and "
        "arguments (look first, e.g. list the directory or read the file), then try a "
        "corrected action."
    )
    assert veto.name == "shell"
    assert veto.artifact["aw_lookahead"]["kind"] == "veto"


def test_checkpointer_keeps_records_across_turns(shell: ShellTool) -> None:
    model = policy(turn(LS), AIMessage("one"), turn(CAT_MISSING), AIMessage("two"))
    agent = create_agent(
        model,
        [shell.tool()],
        middleware=[LookaheadMiddleware(world_model())],
        checkpointer=InMemorySaver(),
    )
    config = thread_config()
    agent.invoke({"messages": [("user", TASK)]}, config)
    out = agent.invoke({"messages": [("user", "now read missing.txt")]}, config)
    assert [r["kind"] for r in out["lookahead"]] == ["execute", "veto"]
    assert shell.executed == {LS: 1}
    # The vetoed call never ran, so the next trajectory leaves it out.
    snapshot = agent.get_state(config)
    assert len(snapshot.values["lookahead"]) == 2


def _select_agent(shell: ShellTool, mw: LookaheadMiddleware) -> Any:
    # Every model turn draws k=3 samples: three tool-call candidates, then three answers.
    done = [AIMessage("Done.") for _ in range(3)]
    model = policy(turn(CAT_MISSING), turn(RM_DATA), turn(LS), *done)
    return create_agent(model, [shell.tool()], middleware=[mw], checkpointer=InMemorySaver())


def _check_select_run(shell: ShellTool, out: dict[str, Any]) -> None:
    assert shell.executed == {LS: 1}
    [rec] = out["lookahead"]
    assert rec["mode"] == "select"
    assert rec["kind"] == "execute"
    assert rec["candidates"] == 3
    assert rec["chosen_index"] == 2
    assert rec["all_pruned"] is False
    alt = {
        a["tool_calls"][0]["args"]["command"]: a["decision"]["kind"] for a in rec["alternatives"]
    }
    assert alt == {CAT_MISSING: "veto", RM_DATA: "veto"}
    # Only the chosen response is in the history.
    ais = [m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls]
    assert [c["args"]["command"] for m in ais for c in m.tool_calls] == [LS]


def test_select_sync_keeps_the_best_candidate(shell: ShellTool) -> None:
    mw = LookaheadMiddleware(world_model(), mode="select", k=3)
    out = _select_agent(shell, mw).invoke({"messages": [("user", TASK)]}, thread_config())
    _check_select_run(shell, out)


async def test_select_async_keeps_the_best_candidate(shell: ShellTool) -> None:
    mw = LookaheadMiddleware(world_model(), mode="select", k=3)
    out = await _select_agent(shell, mw).ainvoke({"messages": [("user", TASK)]}, thread_config())
    _check_select_run(shell, out)


def test_select_all_pruned_returns_veto_to_model(shell: ShellTool) -> None:
    model = policy(turn(CAT_MISSING), turn(RM_DATA), AIMessage("I give up."), AIMessage("No."))
    mw = LookaheadMiddleware(world_model(), mode="select", k=2)
    agent = create_agent(model, [shell.tool()], middleware=[mw], checkpointer=InMemorySaver())
    out = agent.invoke({"messages": [("user", TASK)]}, thread_config())
    assert not shell.executed
    [rec] = out["lookahead"]
    assert rec["all_pruned"] is True
    [veto] = tool_messages(out["messages"])
    assert veto.status == "error"
    assert "NOT executed" in str(veto.content)


def test_ready_engine_and_options_conflict() -> None:
    from aw_lookahead.errors import ConfigError

    engine = Lookahead(world_model())
    assert LookaheadMiddleware(engine).engine is engine
    with pytest.raises(ConfigError, match="ready Lookahead"):
        LookaheadMiddleware(engine, simulate="risky")
    with pytest.raises(ConfigError, match="mode"):
        LookaheadMiddleware(world_model(), mode="maybe")  # type: ignore[arg-type]


async def test_gate_with_the_real_world_model(shell: ShellTool, vllm_server: Any) -> None:
    wm = OpenAIWorldModel(
        vllm_server.model,
        base_url=vllm_server.base_url,
        api_key=vllm_server.api_key,
        max_tokens=64,
        temperature=0.0,
        timeout=600,  # generous; the engine's deadline follows it
    )
    mw = LookaheadMiddleware(wm)
    agent = _gate_agent(shell, mw)
    try:
        out = await agent.ainvoke({"messages": [("user", TASK)]}, thread_config())
    finally:
        await mw.aclose()
    records = out["lookahead"]
    # one batch decision per call; a call after a read that ran may be checked again
    assert len([r for r in records if not r.get("recheck")]) == 3
    by_cmd = {r["decision"]["action"][0]["keystrokes"].strip(): r for r in records}
    for cmd in (CAT_MISSING, RM_DATA, LS):
        rec = by_cmd[cmd]
        assert rec["kind"] in {"execute", "veto", "unsimulated"}
        # What executed is exactly what the engine approved last, once.
        assert shell.executed[cmd] == (1 if rec["executes"] else 0)
        if rec["kind"] != "unsimulated":
            assert rec["decision"]["prediction"]["model"] == vllm_server.model


def test_gate_with_the_sandbox_as_environment_vetoes_what_is_observed_missing(
    shell: ShellTool,
) -> None:
    """The model here predicts success for everything it is asked: the misspelt file is
    caught by looking at the sandbox, with a did-you-mean, and the model is never asked."""
    asked: list[str] = []

    def succeeds(trajectory: Any, action: Any) -> str:
        asked.append(str(action))
        return "$ ok\n"

    gate = LookaheadMiddleware(FunctionWorldModel(succeeds), environment=shell.sandbox)
    model = policy(turn("cat data/a.tx", "cat data/a.txt"), AIMessage("Done."))
    agent = create_agent(model, [shell.tool()], middleware=[gate], checkpointer=InMemorySaver())
    out = agent.invoke({"messages": [("user", TASK)]}, thread_config())
    assert shell.executed == {"cat data/a.txt": 1}
    [veto] = [m for m in tool_messages(out["messages"]) if m.status == "error"]
    assert "did you mean `data/a.txt`" in str(veto.content)
    assert [r["basis"] for r in out["lookahead"]] == ["observed", None]
    assert len(asked) == 1
    assert "data/a.txt" in asked[0]
