"""Issue 46 acceptance: indirect destructive shell forms never run with the world model down.

The indirect corpus (``tests/shell_indirect_corpus_support.py``) with the world model
unreachable (the fail-safe path), through the engine (plain text and keystrokes,
with the keystroke cases' trajectories as history), the LangChain middleware, the
LangGraph node and the MCP proxy. What the gate lets through is compared with the
reads *before* anything runs; the shell tool runs only reads (anything else it is
asked to run is recorded, never executed), and the reads then run for real in a
scratch sandbox.
"""

from __future__ import annotations

import json
import operator
import socket
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest

from aw_lookahead.lookahead import Lookahead
from aw_lookahead.sandbox import TerminalSandbox
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import OpenAIWorldModel
from shell_corpus_support import HARMLESS
from shell_indirect_corpus_support import INDIRECT, KEYSTROKE_READS, KEYSTROKES, READS

pytestmark = pytest.mark.integration

TRAJ = Trajectory(domain="terminal", task="Summarise the files in data/.")
ALL_READS = [*READS, *HARMLESS]


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _down() -> OpenAIWorldModel:
    return OpenAIWorldModel("m", base_url=_dead_url(), timeout=3.0, retries=0)


async def test_engine_blocks_every_indirect_form_and_runs_every_read() -> None:
    wm = _down()
    lk = Lookahead(wm)  # default settings: on_error="fail_safe"
    try:
        plain = await lk.gate(TRAJ, [*INDIRECT, *ALL_READS])
        typed: list[Action] = [
            [{"keystrokes": line, "duration": 0.3}, {"keystrokes": "Enter"}] for line in INDIRECT
        ]
        keyed = await lk.gate(TRAJ, typed)
    finally:
        await wm.aclose()
    ran = [d.action for d in plain[: len(INDIRECT)] + keyed if d.executes]
    assert not ran, f"indirect forms would run: {ran[:5]}"
    refused = [(d.action, d.reason) for d in plain[len(INDIRECT) :] if not d.executes]
    assert not refused, f"reads blocked: {refused[:5]}"
    await _run_reads(ALL_READS)


async def test_engine_judges_keystrokes_with_the_trajectory_as_history() -> None:
    wm = _down()
    lk = Lookahead(wm)
    try:
        for earlier, action in KEYSTROKES:
            trajectory = TRAJ
            for a in earlier:
                trajectory = trajectory.with_turn(a, "")
            (decision,) = await lk.gate(trajectory, [action])
            assert not decision.executes, (earlier, action, decision.reason)
        for earlier, action, _line in KEYSTROKE_READS:
            trajectory = TRAJ
            for a in earlier:
                trajectory = trajectory.with_turn(a, "")
            (decision,) = await lk.gate(trajectory, [action])
            assert decision.executes, (earlier, action, decision.reason)
    finally:
        await wm.aclose()


async def _run_reads(lines: list[str]) -> None:
    async with TerminalSandbox(network=False) as sb:
        sb.write_file("data/a.csv", "1,2\n")
        sb.write_file("data/b.csv", "3,4\n")
        sb.write_file("notes.txt", "foo bar\n")
        root = sb.path
        for line in lines:
            await sb.run(f"cd {root}", timeout=10.0)
            result = await sb.run(line, timeout=20.0)
            assert not result.timed_out, line
        assert (root / "data" / "a.csv").read_text() == "1,2\n"
        assert (root / "data" / "b.csv").read_text() == "3,4\n"


class _ReadsOnlyShell:
    """The shell tool of the adapter tests: it runs reads in a real sandbox and only records
    anything else it is asked to run (a regression then fails the test, never deletes)."""

    def __init__(self, sandbox: TerminalSandbox) -> None:
        self.sandbox = sandbox
        self.asked: list[str] = []

    def run(self, command: str) -> str:
        self.asked.append(command)
        if command not in ALL_READS:
            return "not run"
        return self.sandbox.run_sync(command, timeout=20).output

    async def arun(self, command: str) -> str:
        return self.run(command)

    def tool(self) -> Any:
        from langchain_core.tools import StructuredTool

        return StructuredTool.from_function(
            func=self.run,
            coroutine=self.arun,
            name="shell",
            description="Run a bash command in the workspace and return its output.",
        )


SAMPLE_READS = READS[:20]


def test_langgraph_middleware_with_the_model_down() -> None:
    pytest.importorskip("langchain")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage

    from aw_lookahead.langgraph import LookaheadMiddleware
    from langgraph_support import policy, turn, workspace

    with TerminalSandbox() as sb:
        workspace(sb)
        shell = _ReadsOnlyShell(sb)
        model = policy(turn(*INDIRECT, *SAMPLE_READS), AIMessage("done"))
        agent = create_agent(model, [shell.tool()], middleware=[LookaheadMiddleware(_down())])
        agent.invoke({"messages": [("user", "Summarise data/")]})
    assert not set(shell.asked) & set(INDIRECT)
    assert set(shell.asked) == set(SAMPLE_READS)


def test_langgraph_node_with_the_model_down() -> None:
    pytest.importorskip("langgraph")
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import RunnableLambda
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    from aw_lookahead.langgraph import LookaheadNode, lookahead_condition
    from langgraph_support import policy, thread_config, turn, workspace

    class State(MessagesState):
        lookahead: Annotated[list[dict[str, Any]], operator.add]

    with TerminalSandbox() as sb:
        workspace(sb)
        shell = _ReadsOnlyShell(sb)
        tools = [shell.tool()]
        lines = [*INDIRECT, *SAMPLE_READS]
        turns = [turn(*lines[k : k + 25]) for k in range(0, len(lines), 25)]
        bound = policy(*turns, AIMessage("Done.")).bind_tools(tools)

        def agent(state: State) -> dict[str, Any]:
            return {"messages": [bound.invoke(state["messages"])]}

        g = StateGraph(State)
        g.add_node("agent", RunnableLambda(agent))
        g.add_node("tools", ToolNode(tools))
        g.add_edge(START, "agent")
        g.add_edge("tools", "agent")
        g.add_node("lookahead", LookaheadNode(_down(), tools=tools, state_key="lookahead"))
        g.add_conditional_edges("agent", lookahead_condition)
        graph = g.compile(checkpointer=InMemorySaver())
        graph.invoke({"messages": [("user", "Summarise data/")]}, thread_config())
    assert not set(shell.asked) & set(INDIRECT)
    assert set(shell.asked) == set(SAMPLE_READS)


DOWNSTREAM = """
import json, sys
from mcp.server import MCPServer

server = MCPServer("shell")
LOG = sys.argv[1]


@server.tool()
def run_shell(command: str) -> str:
    \"\"\"Run a shell command.\"\"\"
    with open(LOG, "a") as fh:
        fh.write(json.dumps({"command": command}) + "\\n")
    return "not run"


@server.tool()
def get_weather(city: str) -> str:
    \"\"\"Current weather for a city.\"\"\"
    with open(LOG, "a") as fh:
        fh.write(json.dumps({"city": city}) + "\\n")
    return "sunny"


server.run("stdio")
"""


async def test_mcp_proxy_with_the_model_down(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from aw_lookahead.mcp import Downstream, LookaheadProxy, ProxyConfig

    script = tmp_path / "server.py"
    script.write_text(DOWNSTREAM)
    log = tmp_path / "executed.jsonl"
    log.touch()
    proxy = LookaheadProxy(
        Downstream([sys.executable, str(script), str(log)]), _down(), ProxyConfig()
    )
    async with proxy, Client(proxy.server) as client:
        for line in INDIRECT:
            result = await client.call_tool("run_shell", {"command": line})
            assert result.is_error, line
        weather = await client.call_tool("get_weather", {"city": "Oslo"})
    assert not weather.is_error
    forwarded = [json.loads(x) for x in log.read_text().splitlines()]
    assert forwarded == [{"city": "Oslo"}]
