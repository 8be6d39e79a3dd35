"""LookaheadNode in a hand-built StateGraph with ToolNode, and as create_react_agent's
post_model_hook (sync and async, with a checkpointer)."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from aw_lookahead.langgraph import LookaheadNode, lookahead_condition
from langgraph_support import (
    CAT_MISSING,
    LS,
    RM_DATA,
    TASK,
    ScriptedChat,
    ShellTool,
    policy,
    thread_config,
    tool_messages,
    turn,
    world_model,
)


class State(MessagesState):
    lookahead: Annotated[list[dict[str, Any]], operator.add]


def _graph(shell: ShellTool, model: ScriptedChat) -> Any:
    tools = [shell.tool()]
    bound = model.bind_tools(tools)

    def agent(state: State) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    async def aagent(state: State) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    from langchain_core.runnables import RunnableLambda

    g = StateGraph(State)
    g.add_node("agent", RunnableLambda(agent, afunc=aagent))
    g.add_node("tools", ToolNode(tools))
    g.add_edge(START, "agent")
    g.add_edge("tools", "agent")
    # The two lines of the adoption:
    g.add_node("lookahead", LookaheadNode(world_model(), tools=tools, state_key="lookahead"))
    g.add_conditional_edges("agent", lookahead_condition)
    return g.compile(checkpointer=InMemorySaver())


def _check(shell: ShellTool, out: dict[str, Any]) -> None:
    assert shell.executed == {LS: 1}
    assert shell.sandbox.run_sync("test -d data && echo kept").output.strip() == "kept"
    assert [r["kind"] for r in out["lookahead"]] == ["veto", "veto", "execute"]
    answers = tool_messages(out["messages"])
    assert sorted(m.status for m in answers) == ["error", "error", "success"]
    assert out["messages"][-1].content == "Done."


def _script() -> ScriptedChat:
    return policy(turn(CAT_MISSING, RM_DATA, LS), AIMessage("Done."))


def test_state_graph_sync_runs_only_approved_calls(shell: ShellTool) -> None:
    out = _graph(shell, _script()).invoke({"messages": [("user", TASK)]}, thread_config())
    _check(shell, out)


async def test_state_graph_async_runs_only_approved_calls(shell: ShellTool) -> None:
    out = await _graph(shell, _script()).ainvoke({"messages": [("user", TASK)]}, thread_config())
    _check(shell, out)


def test_all_vetoed_goes_back_to_the_model(shell: ShellTool) -> None:
    model = policy(turn(CAT_MISSING), AIMessage("Done."))
    out = _graph(shell, model).invoke({"messages": [("user", TASK)]}, thread_config())
    assert not shell.executed
    assert [r["kind"] for r in out["lookahead"]] == ["veto"]
    assert out["messages"][-1].content == "Done."


def test_lookahead_condition_routes_like_tools_condition() -> None:
    assert lookahead_condition({"messages": [AIMessage("hi")]}) == END
    assert lookahead_condition({"messages": [turn(LS)]}) == "lookahead"
    assert lookahead_condition([turn(LS)]) == "lookahead"


def _react(shell: ShellTool) -> Any:
    from langgraph.prebuilt import create_react_agent

    node = LookaheadNode(world_model())
    with pytest.warns(DeprecationWarning, match="create_agent"):
        return create_react_agent(
            _script(),
            [shell.tool()],
            post_model_hook=node.hook,
            version="v2",
            checkpointer=InMemorySaver(),
        )


def _check_react(shell: ShellTool, out: dict[str, Any]) -> None:
    assert shell.executed == {LS: 1}
    assert sorted(m.status for m in tool_messages(out["messages"])) == ["error", "error", "success"]
    assert out["messages"][-1].content == "Done."


def test_create_react_agent_post_model_hook_sync(shell: ShellTool) -> None:
    out = _react(shell).invoke({"messages": [("user", TASK)]}, thread_config())
    _check_react(shell, out)


async def test_create_react_agent_post_model_hook_async(shell: ShellTool) -> None:
    out = await _react(shell).ainvoke({"messages": [("user", TASK)]}, thread_config())
    _check_react(shell, out)


@pytest.mark.parametrize("names", [{"tools_node": "run_tools"}, {"model_node": "llm"}])
def test_a_misnamed_node_is_refused_at_first_use(names: dict[str, str]) -> None:
    """LangGraph drops a Send to an unknown node with a log line: the node says so instead."""
    from langchain_core.runnables import RunnableLambda

    from aw_lookahead.errors import UsageError
    from aw_lookahead.sandbox import TerminalSandbox

    with TerminalSandbox() as sb:
        shell = ShellTool(sb)
        tools = [shell.tool()]
        bound = policy(turn(LS), AIMessage("done")).bind_tools(tools)
        g = StateGraph(State)
        g.add_node("agent", RunnableLambda(lambda s: {"messages": [bound.invoke(s["messages"])]}))
        g.add_node("tools", ToolNode(tools))
        g.add_edge(START, "agent")
        g.add_edge("tools", "agent")
        g.add_node("lookahead", LookaheadNode(world_model(), tools=tools, **names))
        g.add_conditional_edges("agent", lookahead_condition)
        with pytest.raises(UsageError, match="has no node") as err:
            g.compile().invoke({"messages": [("user", TASK)]})
        assert "agent, lookahead, tools" in str(err.value)
        assert shell.executed == {}


def test_a_graph_without_the_lookahead_node_does_not_compile() -> None:
    g = StateGraph(State)
    g.add_node("agent", lambda s: {})
    g.add_node("gate", LookaheadNode(world_model()))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", lookahead_condition)
    with pytest.raises(ValueError, match="unknown target 'lookahead'"):
        g.compile()
    mapped = StateGraph(State)
    mapped.add_node("agent", lambda s: {})
    mapped.add_node("gate", LookaheadNode(world_model()))
    mapped.add_edge(START, "agent")
    mapped.add_conditional_edges("agent", lookahead_condition, {"lookahead": "gate", END: END})
    mapped.compile()
