"""TrajectoryRecorder: real runs to JSONL in our schema, re-imported; survives SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from aw_lookahead.agentworldbench import load_turn_samples
from aw_lookahead.langgraph import LookaheadMiddleware, TrajectoryRecorder, read_recording
from aw_lookahead.sandbox import TerminalSandbox
from aw_lookahead.trajectory import Domain, JsonlWriter, Trajectory, read_trajectories
from langgraph_support import CAT_MISSING, LS, TASK, ShellTool, policy, turn, workspace, world_model


@pytest.fixture
def shell() -> Iterator[ShellTool]:
    with TerminalSandbox() as sb:
        workspace(sb)
        yield ShellTool(sb)


def _run(shell: ShellTool, path: Path, thread: str) -> dict[str, Any]:
    model = policy(turn(CAT_MISSING, LS), turn("wc -l data/a.txt"), AIMessage("Done."))
    rec = TrajectoryRecorder(path)
    agent = create_agent(
        model,
        [shell.tool()],
        middleware=[LookaheadMiddleware(world_model()), rec],
        checkpointer=InMemorySaver(),
    )
    try:
        out: dict[str, Any] = agent.invoke(
            {"messages": [("user", TASK)]}, {"configurable": {"thread_id": thread}}
        )
    finally:
        rec.close()
    return out


def test_recorder_writes_real_turns_in_our_schema(shell: ShellTool, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _run(shell, path, "t-1")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == 2  # the vetoed `cat missing.txt` never ran, so it is not recorded
    for obj in lines:
        Trajectory.model_validate(obj)
    [traj] = read_recording(path)
    assert traj.id == "t-1"
    assert traj.domain is Domain.TERMINAL
    assert traj.task == TASK
    assert [t.action for t in traj.turns] == [
        [{"keystrokes": "ls\n", "duration": 1.0}],
        [{"keystrokes": "wc -l data/a.txt\n", "duration": 1.0}],
    ]
    assert [t.observation for t in traj.turns] == [
        "$ ls\ndata\n",
        "$ wc -l data/a.txt\n1 data/a.txt\n",
    ]
    assert [t.metadata["step"] for t in traj.turns] == [0, 1]
    # Re-imports through the generic readers too (one sample per recorded turn).
    assert len(list(read_trajectories(path))) == 2
    assert len(list(load_turn_samples(path))) == 2


async def test_recorder_async_and_two_runs(shell: ShellTool, tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    rec = TrajectoryRecorder(path)
    for thread in ("a", "b"):
        agent = create_agent(
            policy(turn(LS), AIMessage("ok")),
            [shell.tool()],
            middleware=[rec],
            checkpointer=InMemorySaver(),
        )
        await agent.ainvoke({"messages": [("user", TASK)]}, {"configurable": {"thread_id": thread}})
    rec.close()
    runs = {t.id: t for t in read_recording(path)}
    assert set(runs) == {"a", "b"}
    assert all(len(t.turns) == 1 for t in runs.values())


_WRITER = """
import sys
from langchain.agents import create_agent
from langchain_core.tools import tool
from aw_lookahead.langgraph import TrajectoryRecorder
from langgraph_support import endless_policy, ScriptedChat

@tool
def shell(command: str) -> str:
    '''Pretend shell with a large output, so a kill can land mid-write.'''
    return "$ " + command + "\\n" + ("x" * 200 + "\\n") * 400

rec = TrajectoryRecorder(sys.argv[1])
agent = create_agent(ScriptedChat(messages=endless_policy("yes | head")), [shell], middleware=[rec])
agent.invoke({"messages": [("user", "loop forever")]}, {"recursion_limit": 10**7})
"""


def test_sigkill_mid_run_leaves_only_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], env=env)
    try:
        # Only a bound against a hang: importing LangChain in the writer took over 120 s on
        # a loaded 2-core machine; the suite's per-test limit is 600 s.
        deadline = time.monotonic() + 540
        while not (path.exists() and path.read_bytes().count(b"\n") >= 20):
            assert proc.poll() is None, "the writer exited before it was killed"
            assert time.monotonic() < deadline, "the writer wrote too few lines in 540 s"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    data = path.read_bytes()
    whole = data[: data.rfind(b"\n") + 1]
    torn = data[len(whole) :]  # Linux may stop a large write part way on SIGKILL
    JsonlWriter(path).close()  # opening it again moves a torn last line aside
    assert path.read_bytes() == whole
    aside = path.with_name(path.name + ".torn")
    assert (aside.read_bytes() if aside.exists() else b"") == torn
    [traj] = read_recording(path)
    assert len(traj.turns) == whole.count(b"\n") >= 20
    assert all(t.observation.startswith("$ yes | head\n") for t in traj.turns)
