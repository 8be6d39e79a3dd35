"""A decision is remembered for the call itself, never for its id alone.

Providers number tool calls per turn (``call_0``, ``call_1`` ...), so the same id
comes back on a later turn of one conversation and in every other conversation.
A real graph with a real sandboxed shell: a decision to run ``ls`` must never be
reused for ``rm -rf data`` that arrives under the same id, in the node (one
instance serving several threads) and in the middleware.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from aw_lookahead.langgraph import LookaheadMiddleware, LookaheadNode, lookahead_condition
from aw_lookahead.trajectory import canonical_arguments
from langgraph_support import (
    LS,
    RM_DATA,
    TASK,
    ShellTool,
    policy,
    thread_config,
    tool_messages,
    world_model,
)


class State(MessagesState):
    lookahead: Annotated[list[dict[str, Any]], operator.add]


def same_id_turn(command: str, call_id: str = "call_0") -> AIMessage:
    """A turn whose one call has the id a provider gives the first call of every turn."""
    return AIMessage(
        "",
        tool_calls=[
            {"name": "shell", "args": {"command": command}, "id": call_id, "type": "tool_call"}
        ],
    )


def _graph(shell: ShellTool, node: LookaheadNode, script: list[AIMessage]) -> Any:
    tools = [shell.tool()]
    turns = iter(script)

    def agent(state: State) -> dict[str, Any]:
        return {"messages": [next(turns, AIMessage("Done."))]}

    g = StateGraph(State)
    g.add_node("agent", RunnableLambda(agent))
    g.add_node("tools", ToolNode(tools, wrap_tool_call=node.wrap_tool_call))
    g.add_node("lookahead", node)
    g.add_edge(START, "agent")
    g.add_edge("tools", "agent")
    g.add_conditional_edges("agent", lookahead_condition)
    return g.compile(checkpointer=InMemorySaver())


def _kinds(out: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["decision"]["action"][0]["keystrokes"].strip(), r["kind"]) for r in out["lookahead"]]


def _data_kept(shell: ShellTool) -> bool:
    return shell.sandbox.run_sync("test -d data && echo kept").output.strip() == "kept"


def test_canonical_arguments_ignore_key_order_and_keep_types() -> None:
    assert canonical_arguments({"b": 1, "a": 2}) == canonical_arguments({"a": 2, "b": 1})
    assert canonical_arguments({"a": 1}) != canonical_arguments({"a": 1.0})
    assert canonical_arguments({"a": 1}) != canonical_arguments({"a": True})


def test_node_within_one_conversation_decides_a_repeated_id_again(shell: ShellTool) -> None:
    node = LookaheadNode(world_model(), state_key="lookahead")
    graph = _graph(shell, node, [same_id_turn(LS), same_id_turn(RM_DATA)])
    out = graph.invoke({"messages": [("user", TASK)]}, thread_config())
    assert _kinds(out) == [(LS, "execute"), (RM_DATA, "veto")]
    assert shell.executed == {LS: 1}
    assert _data_kept(shell)
    answers = tool_messages(out["messages"])
    assert [m.status for m in answers] == ["success", "error"]
    assert "NOT executed" in str(answers[1].content)


def test_node_across_conversations_never_shares_a_decision(shell: ShellTool) -> None:
    node = LookaheadNode(world_model(), state_key="lookahead")
    first = _graph(shell, node, [same_id_turn(LS)])
    out_a = first.invoke({"messages": [("user", TASK)]}, thread_config())
    assert _kinds(out_a) == [(LS, "execute")]
    second = _graph(shell, node, [same_id_turn(RM_DATA)])
    out_b = second.invoke({"messages": [("user", TASK)]}, thread_config())
    assert _kinds(out_b) == [(RM_DATA, "veto")]
    assert shell.executed == {LS: 1}
    assert _data_kept(shell)


async def test_node_async_with_a_repeated_id_in_one_conversation(shell: ShellTool) -> None:
    node = LookaheadNode(world_model(), state_key="lookahead")
    graph = _graph(shell, node, [same_id_turn(LS), same_id_turn(RM_DATA)])
    out = await graph.ainvoke({"messages": [("user", TASK)]}, thread_config())
    assert _kinds(out) == [(LS, "execute"), (RM_DATA, "veto")]
    assert shell.executed == {LS: 1}


def test_middleware_within_one_conversation_decides_a_repeated_id_again(
    shell: ShellTool,
) -> None:
    model = policy(same_id_turn(LS), same_id_turn(RM_DATA), AIMessage("Done."))
    agent = create_agent(
        model,
        [shell.tool()],
        middleware=[LookaheadMiddleware(world_model())],
        checkpointer=InMemorySaver(),
    )
    out = agent.invoke({"messages": [("user", TASK)]}, thread_config())
    assert _kinds(out) == [(LS, "execute"), (RM_DATA, "veto")]
    assert shell.executed == {LS: 1}
    assert _data_kept(shell)


def test_node_decides_a_turn_with_more_calls_than_it_remembers(shell: ShellTool) -> None:
    node = LookaheadNode(world_model(), state_key="lookahead")
    n = LookaheadNode._MEMO + 100
    calls = [
        {"name": "shell", "args": {"command": f"echo {i}"}, "id": f"c{i}", "type": "tool_call"}
        for i in range(n)
    ]
    graph = _graph(shell, node, [AIMessage("", tool_calls=calls)])
    out = graph.invoke({"messages": [("user", TASK)]}, thread_config())
    assert len(out["lookahead"]) == n
    assert sum(shell.executed.values()) == n
