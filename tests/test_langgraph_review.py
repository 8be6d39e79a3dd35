"""HumanInTheLoopMiddleware-style review of vetoed calls through ``on_veto="interrupt"``.

Real create_agent / StateGraph graphs with a checkpointer and a real sandboxed
shell; the policy is scripted, the world model is the deterministic terminal
model of langgraph_support (or one that predicts every command fails). The
answers are what HITL UIs send: ``{"decisions": [...]}`` with approve, edit,
reject and respond; anything else is an error, never a silent reject.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command

from aw_lookahead.errors import UsageError
from aw_lookahead.langgraph import LookaheadMiddleware, LookaheadNode, lookahead_condition
from aw_lookahead.langgraph._review import read_review
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel
from langgraph_support import (
    CAT_MISSING,
    LS,
    RM_DATA,
    ShellTool,
    command_of,
    policy,
    thread_config,
    tool_messages,
    turn,
    world_model,
)

INPUT = {"messages": [("user", "Tidy the workspace.")]}
RM_ONE = "rm -f data/a.txt"


def _agent(shell: ShellTool, mw: LookaheadMiddleware) -> Any:
    model = policy(turn(RM_DATA, LS), AIMessage("done"))
    return create_agent(model, [shell.tool()], middleware=[mw], checkpointer=InMemorySaver())


def _exists(shell: ShellTool, path: str) -> bool:
    return shell.sandbox.run_sync(f"test -e {path} && echo yes").output.strip() == "yes"


def _answers(out: dict[str, Any]) -> dict[str, Any]:
    """The ToolMessage answering each call, by the command the AIMessage shows."""
    by_id = {m.tool_call_id: m for m in tool_messages(out["messages"])}
    return {
        c["args"]["command"]: by_id[c["id"]]
        for m in out["messages"]
        if isinstance(m, AIMessage)
        for c in m.tool_calls
        if c["id"] in by_id
    }


def test_middleware_edit_runs_the_edited_call_once(shell: ShellTool) -> None:
    agent = _agent(shell, LookaheadMiddleware(world_model(), on_veto="interrupt"))
    config = thread_config()
    agent.invoke(INPUT, config)
    edit = {"type": "edit", "edited_action": {"name": "shell", "args": {"command": RM_ONE}}}
    out = agent.invoke(Command(resume={"decisions": [edit]}), config)
    assert shell.executed == {LS: 1, RM_ONE: 1}
    assert _exists(shell, "data")
    assert _exists(shell, "data/b.txt")
    assert not _exists(shell, "data/a.txt")
    answer = _answers(out)[RM_DATA]  # the middleware answers under the call's own id
    assert "a person edited and approved this call" in str(answer.content)


def test_middleware_respond_answers_without_running(shell: ShellTool) -> None:
    agent = _agent(shell, LookaheadMiddleware(world_model(), on_veto="interrupt"))
    config = thread_config()
    agent.invoke(INPUT, config)
    reply = "Not now: data/ is being backed up."
    out = agent.invoke(
        Command(resume={"decisions": [{"type": "respond", "message": reply}]}), config
    )
    assert shell.executed == {LS: 1}
    assert _exists(shell, "data/a.txt")
    answer = _answers(out)[RM_DATA]
    assert answer.content == reply
    assert answer.status == "success"


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({"type": "maybe"}, "unknown approval decision type 'maybe'"),
        ("sure, why not", "unknown approval answer"),
        ({"decisions": [{"type": "approve"}, {"type": "approve"}]}, "2 decision(s) answer 1"),
        (
            {"decisions": [{"type": "edit", "edited_action": {"name": "other", "args": {}}}]},
            "not call another tool",
        ),
        ({"decisions": [{"type": "respond"}]}, 'needs a "message"'),
    ],
)
def test_an_answer_it_cannot_read_is_an_error_not_a_reject(
    shell: ShellTool, answer: Any, says: str, caplog: pytest.LogCaptureFixture
) -> None:
    agent = _agent(shell, LookaheadMiddleware(world_model(), on_veto="interrupt"))
    config = thread_config()
    agent.invoke(INPUT, config)
    out = agent.invoke(Command(resume=answer), config)
    [pending] = out["__interrupt__"]  # asked again, with the reason
    assert says in pending.value["error"]
    assert [a["args"] for a in pending.value["action_requests"]] == [{"command": RM_DATA}]
    assert any(says in r.getMessage() for r in caplog.records if r.name == "aw_lookahead")
    assert shell.executed == {LS: 1}
    assert _exists(shell, "data/a.txt")
    out = agent.invoke(Command(resume={"decisions": [{"type": "reject"}]}), config)
    assert "__interrupt__" not in out
    assert shell.executed == {LS: 1}
    assert _exists(shell, "data/a.txt")
    assert _answers(out)[RM_DATA].status == "error"


def test_read_review_raises_a_usage_error_naming_the_accepted_forms() -> None:
    call = {"name": "shell", "args": {"command": RM_DATA}, "id": "call_0"}
    with pytest.raises(UsageError, match=r'answer with \{"decisions"'):
        read_review({"type": "maybe"}, [call])
    with pytest.raises(UsageError, match="one decision answers 2"):
        read_review({"type": "approve"}, [call, {**call, "id": "call_1"}])
    assert [r.type for r in read_review("approve", [call, call])] == ["approve", "approve"]
    assert (
        read_review({"decisions": [{"type": "reject", "message": "no"}]}, [call])[0].message == "no"
    )


def _predict_failure(trajectory: Trajectory, action: Action) -> str:
    command = command_of(action)
    return f"$ {command}\nbash: {command.split()[0]}: No such file or directory\n"


def test_a_destructive_call_predicted_to_fail_is_still_shown_as_destructive(
    shell: ShellTool,
) -> None:
    failing = FunctionWorldModel(_predict_failure, model_id="predicts-failure")
    agent = _agent(shell, LookaheadMiddleware(failing, on_veto="interrupt"))
    first = agent.invoke(INPUT, thread_config())
    requests = [p.value["action_requests"][0] for p in first["__interrupt__"]]
    rm = next(r for r in requests if r["args"] == {"command": RM_DATA})
    assert rm["aw_lookahead"]["outcome"] == "failure"
    assert rm["description"].startswith("DESTRUCTIVE: rm recursively deletes 'data'.")
    assert "No such file or directory" in rm["description"]
    ls = next(r for r in requests if r["args"] == {"command": LS})
    assert ls["aw_lookahead"]["destructive"] is None
    assert not ls["description"].startswith("DESTRUCTIVE")


class State(MessagesState):
    lookahead: Annotated[list[dict[str, Any]], operator.add]


def _graph(shell: ShellTool, node: LookaheadNode) -> Any:
    tools = [shell.tool()]
    bound = policy(turn(RM_DATA, CAT_MISSING, LS), AIMessage("done"))

    def agent(state: State) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    g = StateGraph(State)
    g.add_node("agent", RunnableLambda(agent))
    g.add_node("tools", ToolNode(tools, wrap_tool_call=node.wrap_tool_call))
    g.add_edge(START, "agent")
    g.add_edge("tools", "agent")
    g.add_node("lookahead", node)
    g.add_conditional_edges("agent", lookahead_condition)
    return g.compile(checkpointer=InMemorySaver())


def test_node_asks_once_per_turn_and_takes_one_decision_per_call(shell: ShellTool) -> None:
    node = LookaheadNode(world_model(), state_key="lookahead", on_veto="interrupt")
    graph = _graph(shell, node)
    config = thread_config()
    first = graph.invoke(INPUT, config)
    [pending] = first["__interrupt__"]
    asked = [a["args"]["command"] for a in pending.value["action_requests"]]
    assert asked == [RM_DATA, CAT_MISSING]
    assert shell.executed == {}
    edit = {
        "type": "edit",
        "edited_action": {"name": "shell", "args": {"command": "cat data/a.txt"}},
    }
    out = graph.invoke(
        Command(resume={"decisions": [{"type": "reject", "message": "keep data/"}, edit]}), config
    )
    assert shell.executed == {"cat data/a.txt": 1, LS: 1}
    assert _exists(shell, "data/a.txt")
    answers = _answers(out)  # the transcript shows the edited call, as HITL does
    assert "alpha" in str(answers["cat data/a.txt"].content)
    assert answers[RM_DATA].status == "error"
    assert "keep data/" in str(answers[RM_DATA].content)
    assert CAT_MISSING not in answers
    assert [r["kind"] for r in out["lookahead"]] == ["veto", "veto", "execute"]
