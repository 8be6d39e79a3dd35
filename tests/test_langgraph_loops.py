"""One LookaheadMiddleware / LookaheadNode / engine across event loops, against the real server.

Successive ``asyncio.run`` calls, pytest's per-test loops, ``invoke`` then
``ainvoke``, and two threads at once: every decision must be simulated (a
decision that failed on loop binding would come back ``unsimulated``).
Limits are generous on purpose: these tests are about loops, not speed.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage

from aw_lookahead.langgraph import LookaheadMiddleware
from aw_lookahead.lookahead import Lookahead
from aw_lookahead.trajectory import Trajectory
from aw_lookahead.worldmodel import OpenAIWorldModel
from langgraph_support import LS, ShellTool, policy, turn

pytestmark = pytest.mark.integration


def _world_model(server: Any) -> OpenAIWorldModel:
    # max_concurrency=1 with two calls per turn: the requests queue on the client's
    # semaphore in every loop, the case that breaks a loop-bound client.
    return OpenAIWorldModel(
        server.model,
        base_url=server.base_url,
        api_key=server.api_key,
        max_tokens=24,
        timeout=600,
        max_concurrency=1,
    )


def _agent(shell: ShellTool, mw: LookaheadMiddleware) -> Any:
    model = policy(turn(LS, "pwd"), AIMessage("done"))
    return create_agent(model, [shell.tool()], middleware=[mw])


INPUT = {"messages": [("user", "List the workspace.")]}


def _simulated(out: dict[str, Any]) -> None:
    records = out["lookahead"]
    # one batch decision per call; pwd may be checked again after ls ran (recheck_after_reads)
    assert len([r for r in records if not r.get("recheck")]) == 2
    for rec in records:
        assert rec["kind"] in {"execute", "veto"}, rec["decision"]
        assert rec["decision"]["prediction"] is not None


def test_middleware_across_asyncio_run_invoke_ainvoke_and_threads(
    vllm_server: Any, shell: ShellTool
) -> None:
    mw = LookaheadMiddleware(_world_model(vllm_server), cache=False)
    for _ in range(2):  # two successive event loops
        _simulated(asyncio.run(_agent(shell, mw).ainvoke(INPUT)))
    _simulated(_agent(shell, mw).invoke(INPUT))  # the background loop
    _simulated(asyncio.run(_agent(shell, mw).ainvoke(INPUT)))  # then a new loop again

    results: list[dict[str, Any]] = []
    errors: list[BaseException] = []

    def worker(use_async: bool) -> None:
        try:
            agent = _agent(shell, mw)
            out = asyncio.run(agent.ainvoke(INPUT)) if use_async else agent.invoke(INPUT)
            results.append(dict(out))
        except BaseException as exc:  # reported below, with the thread's error
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(flag,)) for flag in (True, False)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=1200)
    assert not errors, errors
    assert len(results) == 2
    for out in results:
        _simulated(out)
    assert mw.engine.stats.errors == 0


TRAJ = Trajectory(domain="terminal", task="Look around.")

_shared: dict[str, Lookahead] = {}


@pytest.fixture(scope="module")
def shared_engine(vllm_server: Any) -> Lookahead:
    return _shared.setdefault("engine", Lookahead(_world_model(vllm_server), cache=False))


@pytest.mark.asyncio(loop_scope="function")  # a fresh loop per case, as pytest can be set to
@pytest.mark.parametrize("commands", [("pwd", "ls -la"), ("whoami", "ls -a")])
async def test_engine_across_pytest_loops(shared_engine: Lookahead, commands: Any) -> None:
    # Each parametrised case runs on its own pytest event loop with the same engine.
    for decision in await shared_engine.gate(TRAJ, list(commands)):
        assert decision.prediction is not None, decision.error


def test_node_across_asyncio_run_and_invoke(vllm_server: Any, shell: ShellTool) -> None:
    from langchain_core.runnables import RunnableLambda
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    from aw_lookahead.langgraph import LookaheadNode, lookahead_condition

    tools = [shell.tool()]
    node = LookaheadNode(_world_model(vllm_server), tools=tools, cache=False)

    def graph() -> Any:
        model = policy(turn(LS, "pwd"), AIMessage("done"))
        g = StateGraph(MessagesState)
        g.add_node("agent", RunnableLambda(lambda s: {"messages": [model.invoke(s["messages"])]}))
        g.add_node("tools", ToolNode(tools))
        g.add_node("lookahead", node)
        g.add_edge(START, "agent")
        g.add_edge("tools", "agent")
        g.add_conditional_edges("agent", lookahead_condition)
        return g.compile()

    asyncio.run(graph().ainvoke(INPUT))
    asyncio.run(graph().ainvoke(INPUT))
    graph().invoke(INPUT)
    assert node.engine.stats.actions == 6
    assert node.engine.stats.errors == 0  # every decision got a prediction and a verdict
    assert node.engine.stats.model_calls == 6
