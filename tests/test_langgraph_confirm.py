"""Confirm-and-run (on_veto="interrupt") and observability (custom stream, callback runs).

Real create_agent / StateGraph graphs with a checkpointer and a real sandboxed
shell; the policy is scripted and the world model is the deterministic
terminal model of langgraph_support.
"""

from __future__ import annotations

import json
import operator
import secrets
from typing import Annotated, Any
from uuid import UUID

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command

from aw_lookahead.langgraph import LookaheadMiddleware, LookaheadNode, lookahead_condition
from langgraph_support import (
    CAT_MISSING,
    LS,
    RM_DATA,
    ShellTool,
    policy,
    thread_config,
    tool_messages,
    turn,
    world_model,
)

INPUT = {"messages": [("user", "Tidy the workspace.")]}


def _agent(shell: ShellTool, mw: LookaheadMiddleware) -> Any:
    model = policy(turn(RM_DATA, LS), AIMessage("done"))
    return create_agent(model, [shell.tool()], middleware=[mw], checkpointer=InMemorySaver())


def _data_kept(shell: ShellTool) -> bool:
    return shell.sandbox.run_sync("test -d data && echo kept").output.strip() == "kept"


def _answer_to(out: dict[str, Any], command: str) -> Any:
    calls = {
        c["id"]: c["args"]["command"]
        for m in out["messages"]
        if isinstance(m, AIMessage)
        for c in m.tool_calls
    }
    return next(m for m in tool_messages(out["messages"]) if calls[m.tool_call_id] == command)


@pytest.mark.parametrize(
    ("use_async", "answer"),
    [
        (False, {"decisions": [{"type": "approve"}]}),
        (True, {"type": "approve"}),
        (False, "approve"),
    ],
)
async def test_middleware_interrupt_then_approve_runs_the_call_once(
    shell: ShellTool, use_async: bool, answer: Any
) -> None:
    agent = _agent(shell, LookaheadMiddleware(world_model(), on_veto="interrupt"))
    config = thread_config()
    first = await agent.ainvoke(INPUT, config) if use_async else agent.invoke(INPUT, config)
    [pending] = first["__interrupt__"]
    request = pending.value
    [action] = request["action_requests"]  # HumanInTheLoopMiddleware's HITLRequest
    assert action["name"] == "shell"
    assert action["args"] == {"command": RM_DATA}
    assert action["description"].startswith("DESTRUCTIVE: rm recursively deletes 'data'")
    assert request["review_configs"] == [
        {"action_name": "shell", "allowed_decisions": ["approve", "edit", "reject", "respond"]}
    ]
    evidence = action["aw_lookahead"]
    assert evidence["outcome"] == "risky"
    assert "removed directory" in evidence["prediction"]
    assert evidence["reason"]
    assert evidence["destructive"] == "rm recursively deletes 'data'"
    assert shell.executed == {LS: 1}
    assert _data_kept(shell)

    resume = Command(resume=answer)
    out = await agent.ainvoke(resume, config) if use_async else agent.invoke(resume, config)
    assert "__interrupt__" not in out
    assert shell.executed == {LS: 1, RM_DATA: 1}  # exactly that call, once; ls not re-run
    assert not _data_kept(shell)
    assert "a person approved this call" in str(_answer_to(out, RM_DATA).content)


def test_middleware_interrupt_then_reject_returns_the_veto(shell: ShellTool) -> None:
    agent = _agent(shell, LookaheadMiddleware(world_model(), on_veto="interrupt"))
    config = thread_config()
    agent.invoke(INPUT, config)
    out = agent.invoke(Command(resume={"type": "reject", "message": "keep data/"}), config)
    assert RM_DATA not in shell.executed
    assert _data_kept(shell)
    answer = _answer_to(out, RM_DATA)
    assert answer.status == "error"
    assert "NOT executed" in str(answer.content)
    assert "keep data/" in str(answer.content)


class State(MessagesState):
    lookahead: Annotated[list[dict[str, Any]], operator.add]


def _graph(shell: ShellTool, node: LookaheadNode) -> Any:
    tools = [shell.tool()]
    bound = policy(turn(RM_DATA, LS), AIMessage("done"))

    def agent(state: State) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    g = StateGraph(State)
    g.add_node("agent", RunnableLambda(agent))
    tool_node = ToolNode(tools, wrap_tool_call=node.wrap_tool_call)
    g.add_node("tools", tool_node)
    g.add_edge(START, "agent")
    g.add_edge("tools", "agent")
    g.add_node("lookahead", node)
    g.add_conditional_edges("agent", lookahead_condition)
    return g.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("answer", ["approve", "reject"])
def test_node_interrupt(shell: ShellTool, answer: str) -> None:
    node = LookaheadNode(world_model(), state_key="lookahead", on_veto="interrupt")
    graph = _graph(shell, node)
    config = thread_config()
    first = graph.invoke(INPUT, config)
    [pending] = first["__interrupt__"]
    assert [a["args"] for a in pending.value["action_requests"]] == [{"command": RM_DATA}]
    assert shell.executed == {}  # the node asks before sending anything to the tools
    out = graph.invoke(Command(resume=answer), config)
    if answer == "approve":
        assert shell.executed == {RM_DATA: 1, LS: 1}
        assert not _data_kept(shell)
    else:
        assert shell.executed == {LS: 1}
        assert _data_kept(shell)
        assert _answer_to(out, RM_DATA).status == "error"
    assert [r["kind"] for r in out["lookahead"]] == ["veto", "execute"]


# --------------------------------------------------------------------------- observability


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.starts: dict[UUID, list[str]] = {}
        self.ends: dict[UUID, LLMResult] = {}
        self.tags: dict[UUID, list[str]] = {}

    def on_llm_start(
        self, serialized: dict[str, Any], prompts: list[str], *, run_id: UUID, **kw: Any
    ) -> None:
        if kw.get("name") == "aw_lookahead.world_model":
            self.starts[run_id] = prompts
            self.tags[run_id] = list(kw.get("tags") or [])

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kw: Any) -> None:
        if run_id in self.starts:
            self.ends[run_id] = response


def _three_call_agent(shell: ShellTool, mw: LookaheadMiddleware) -> Any:
    model = policy(turn(CAT_MISSING, RM_DATA, LS), AIMessage("done"))
    return create_agent(model, [shell.tool()], middleware=[mw])


def test_decisions_stream_as_custom_events(shell: ShellTool) -> None:
    agent = _three_call_agent(shell, LookaheadMiddleware(world_model()))
    events = list(agent.stream(INPUT, stream_mode="custom"))
    records = [e["aw_lookahead"] for e in events if isinstance(e, dict) and "aw_lookahead" in e]
    assert [(r["kind"], r["tool"]) for r in records] == [
        ("veto", "shell"),
        ("veto", "shell"),
        ("execute", "shell"),
    ]
    assert records[1]["decision"]["outcome"] == "risky"


async def test_world_model_calls_are_child_runs_in_callbacks(shell: ShellTool) -> None:
    recorder = Recorder()
    agent = _three_call_agent(shell, LookaheadMiddleware(world_model()))
    await agent.ainvoke(INPUT, {"callbacks": [recorder]})
    assert len(recorder.starts) == len(recorder.ends) == 3
    prompts = sorted(p[0] for p in recorder.starts.values())
    assert any(RM_DATA in p for p in prompts)
    for run_id, result in recorder.ends.items():
        info = result.llm_output or {}
        assert {"prompt_tokens", "latency_s", "kind", "outcome"} <= set(info)
        assert result.generations[0][0].text.startswith("$ ")  # the predicted observation
        # tagged nostream: LangGraph keeps it out of stream_mode="messages"
        assert "nostream" in recorder.tags[run_id]


async def test_callback_runs_and_stream_events_carry_redacted_text(shell: ShellTool) -> None:
    """A token in a tool call reaches neither a tracing handler (the run's prompt, its
    predicted observation, which echoes the command) nor the custom stream events."""
    token = "ghp_" + secrets.token_hex(18)
    command = f"echo {token} > /dev/null"
    recorder = Recorder()
    agent = create_agent(
        policy(turn(command), AIMessage("done")),
        [shell.tool()],
        middleware=[LookaheadMiddleware(world_model())],
    )
    await agent.ainvoke(INPUT, {"callbacks": [recorder]})
    assert len(recorder.starts) == len(recorder.ends) == 1
    traced = json.dumps(list(recorder.starts.values())) + repr(list(recorder.ends.values()))
    assert token not in traced
    assert traced.count("[REDACTED_GITHUB_TOKEN_") >= 2  # the prompt and the observation
    agent = create_agent(
        policy(turn(command), AIMessage("done")),
        [shell.tool()],
        middleware=[LookaheadMiddleware(world_model())],
    )
    events = [e for e in agent.stream(INPUT, stream_mode="custom") if "aw_lookahead" in e]
    assert events
    assert token not in json.dumps(events, default=str)


def test_select_does_not_sample_k_for_a_final_answer(shell: ShellTool) -> None:
    model = policy(AIMessage("All done, nothing to run."))  # exactly one response available
    mw = LookaheadMiddleware(world_model(), mode="select", k=4)
    agent = create_agent(model, [shell.tool()], middleware=[mw])
    out = agent.invoke(INPUT)
    assert out["messages"][-1].content == "All done, nothing to run."
