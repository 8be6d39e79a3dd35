"""Shadow mode: real execution untouched, (predicted, real) pairs with divergence scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from aw_lookahead.langgraph import ShadowMiddleware, divergence, read_shadow_pairs
from aw_lookahead.sandbox import TerminalSandbox
from aw_lookahead.worldmodel import FunctionWorldModel, OpenAIWorldModel
from langgraph_support import (
    CAT_MISSING,
    LS,
    RM_DATA,
    TASK,
    ShellTool,
    policy,
    tool_messages,
    turn,
    workspace,
    world_model,
)


def test_divergence_score() -> None:
    assert divergence("a b\nc", "a b\nc") == 0.0
    assert divergence("  a   b \n\n c ", "a b\nc") == 0.0  # whitespace and blank lines ignored
    assert divergence("x y", "a b") == 1.0
    assert divergence("", "") == 0.0
    assert divergence("", "a") == 1.0
    assert divergence("a b c d", "a b") == pytest.approx(1 - 2 * (0.5 * 1.0) / 1.5, abs=1e-6)


def _script() -> Any:
    return policy(turn(CAT_MISSING, LS), turn(RM_DATA), AIMessage("Done."))


def _run(shell: ShellTool, middleware: list[Any], thread: str) -> dict[str, Any]:
    agent = create_agent(
        _script(), [shell.tool()], middleware=middleware, checkpointer=InMemorySaver()
    )
    out: dict[str, Any] = agent.invoke(
        {"messages": [("user", TASK)]}, {"configurable": {"thread_id": thread}}
    )
    return out


def _observations(out: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(m.content), m.status) for m in tool_messages(out["messages"])]


def test_shadow_never_changes_execution(tmp_path: Path) -> None:
    with TerminalSandbox() as sb_plain:
        workspace(sb_plain)
        plain_shell = ShellTool(sb_plain)
        plain = _run(plain_shell, [], "plain")
    with TerminalSandbox() as sb:
        workspace(sb)
        shadow_shell = ShellTool(sb)
        path = tmp_path / "pairs.jsonl"
        mw = ShadowMiddleware(world_model(), path=path)
        shadowed = _run(shadow_shell, [mw], "shadow")
        mw.close()
    # Same calls ran, each once (even the destructive one: shadow never vetoes) ...
    assert shadow_shell.executed == plain_shell.executed == {CAT_MISSING: 1, LS: 1, RM_DATA: 1}
    # ... with the same results as without shadow mode (sandbox paths differ, outputs don't).
    assert _observations(shadowed) == _observations(plain)
    pairs = list(read_shadow_pairs(path))
    real_ids = [m.tool_call_id for m in tool_messages(shadowed["messages"])]
    assert sorted(p.tool_call_id for p in pairs) == sorted(real_ids)
    by_cmd = {p.sample.action[0]["keystrokes"].strip(): p for p in pairs}  # type: ignore[index]
    # The deterministic model predicted `cat` and `ls` exactly: divergence 0.
    assert by_cmd[CAT_MISSING].divergence == 0.0
    assert by_cmd[LS].divergence == 0.0
    # `rm -rf` printed nothing for real (no -v), the model predicted `removed ...` lines.
    assert by_cmd[RM_DATA].real == f"$ {RM_DATA}\n"
    # 4 shared tokens (the `$ rm -rf data` echo) of 11 predicted: 1 - F1 = 1 - 8/15.
    assert by_cmd[RM_DATA].divergence == pytest.approx(7 / 15, abs=1e-6)
    # What the gate would have done is logged beside it.
    assert [by_cmd[c].would_execute for c in (CAT_MISSING, LS, RM_DATA)] == [False, True, False]
    # Each pair is a training sample whose target is the real observation.
    assert by_cmd[LS].sample.observation == by_cmd[LS].real
    assert all(p.predicted_error is None for p in pairs)


async def test_shadow_async_and_world_model_failure(shell: ShellTool) -> None:
    def broken(trajectory: Any, action: Any) -> str:
        from aw_lookahead.errors import ServerUnreachableError

        raise ServerUnreachableError("http://127.0.0.1:9/v1")

    mw = ShadowMiddleware(FunctionWorldModel(broken), on_error="fail_closed")
    agent = create_agent(
        policy(turn(LS), AIMessage("ok")),
        [shell.tool()],
        middleware=[mw],
        checkpointer=InMemorySaver(),
    )
    out = await agent.ainvoke({"messages": [("user", TASK)]}, {"configurable": {"thread_id": "x"}})
    assert shell.executed == {LS: 1}
    assert _observations(out) == [("$ ls\ndata\n", "success")]
    [pair] = mw.pairs
    assert pair.predicted is None
    assert pair.divergence is None
    assert pair.would_execute is False  # fail_closed would have blocked it; shadow did not


async def test_shadow_with_the_real_world_model(shell: ShellTool, vllm_server: Any) -> None:
    wm = OpenAIWorldModel(
        vllm_server.model,
        base_url=vllm_server.base_url,
        api_key=vllm_server.api_key,
        max_tokens=48,
        temperature=0.0,
        timeout=600,
    )
    mw = ShadowMiddleware(wm, deadline_s=900)  # a busy machine may take minutes: not the point
    agent = create_agent(
        policy(turn(LS, "cat data/a.txt"), AIMessage("ok")),
        [shell.tool()],
        middleware=[mw],
        checkpointer=InMemorySaver(),
    )
    try:
        out = await agent.ainvoke(
            {"messages": [("user", TASK)]}, {"configurable": {"thread_id": "r"}}
        )
    finally:
        await mw.aclose()
    assert shell.executed == {LS: 1, "cat data/a.txt": 1}
    assert sorted(_observations(out)) == [
        ("$ cat data/a.txt\nalpha\n", "success"),
        ("$ ls\ndata\n", "success"),
    ]
    assert len(mw.pairs) == 2
    for pair in mw.pairs:
        assert pair.predicted_error is None
        assert pair.predicted is not None
        assert pair.divergence is not None
        assert 0.0 <= pair.divergence <= 1.0
        assert pair.decision is not None
        assert pair.decision["prediction"]["model"] == vllm_server.model
