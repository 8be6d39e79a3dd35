"""One shadow format: the LangGraph middleware's and the MCP proxy's logs are the same records.

Real parts: a real agent graph over a real sandboxed shell, the real MCP
filesystem server behind the proxy over stdio. Only the world models are
deterministic functions, so the expected records are known.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("langgraph")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from mcp import Client

from aw_lookahead.cli import main
from aw_lookahead.langgraph import ShadowMiddleware
from aw_lookahead.lookahead.shadow import ShadowPair, read_shadow_pairs
from aw_lookahead.mcp import Downstream, LookaheadProxy, ProxyConfig, ProxyMode
from aw_lookahead.sandbox import TerminalSandbox
from aw_lookahead.training.data import read_training_records
from aw_lookahead.trajectory import Action, Trajectory, TurnSample
from aw_lookahead.worldmodel import FunctionWorldModel
from langgraph_support import LS, TASK, ShellTool, policy, turn, workspace, world_model

pytestmark = pytest.mark.integration


def _fs_model(trajectory: Trajectory, action: Action) -> str:
    assert isinstance(action, dict)
    return f"Successfully ran {action['name']}"


def _langgraph_log(path: Path) -> None:
    with TerminalSandbox() as sb:
        workspace(sb)
        shell = ShellTool(sb)
        mw = ShadowMiddleware(world_model(), path=path)
        agent = create_agent(
            policy(turn(LS), turn("cat data/a.txt"), AIMessage("Done.")),
            [shell.tool()],
            middleware=[mw],
            checkpointer=InMemorySaver(),
        )
        try:
            agent.invoke({"messages": [("user", TASK)]}, {"configurable": {"thread_id": "lg"}})
        finally:
            mw.close()


async def _mcp_log(fs_server: Path, root: Path, path: Path) -> None:
    wm = FunctionWorldModel(_fs_model, model_id="scripted-fs")
    config = ProxyConfig(mode=ProxyMode.SHADOW, shadow_log=path)
    proxy = LookaheadProxy(Downstream([str(fs_server), str(root)]), wm, config)
    async with proxy, Client(proxy.server) as client:
        await client.call_tool("write_file", {"path": str(root / "s.txt"), "content": "s"})
        await client.call_tool("read_text_file", {"path": str(root / "missing.txt")})


def test_langgraph_and_mcp_shadow_logs_load_as_one_record_type(
    mcp_fs_server: Path, tmp_path: Path
) -> None:
    lg_log, mcp_log = tmp_path / "lg.jsonl", tmp_path / "mcp.jsonl"
    _langgraph_log(lg_log)
    root = tmp_path / "root"
    root.mkdir()
    asyncio.run(_mcp_log(mcp_fs_server, root, mcp_log))

    # A pair is written when both halves are in: put the file's completion order back in call order.
    lg, mcp = (
        [*sorted(read_shadow_pairs(f), key=lambda p: p.started_at)] for f in (lg_log, mcp_log)
    )
    assert [p.source for p in lg] == ["langgraph", "langgraph"]
    assert [p.source for p in mcp] == ["mcp", "mcp"]
    assert all(type(p) is ShadowPair for p in lg + mcp)
    # Same fields on every line of both files, not just the same Python type.
    keys = {
        frozenset(json.loads(line))
        for log in (lg_log, mcp_log)
        for line in log.read_text().splitlines()
    }
    assert keys == {frozenset(ShadowPair.model_fields)}
    assert [p.model for p in lg] == ["scripted-terminal"] * 2
    assert [p.model for p in mcp] == ["scripted-fs"] * 2
    assert [p.tool for p in mcp] == ["write_file", "read_text_file"]
    assert mcp[0].predicted == "Successfully ran write_file"
    assert mcp[0].real.startswith("Successfully wrote")
    assert mcp[1].real_is_error is True
    assert len({p.run_id for p in lg}) == len({p.run_id for p in mcp}) == 1
    for pair in lg + mcp:
        assert pair.started_at > 0
        assert pair.divergence is not None
        assert 0.0 <= pair.divergence <= 1.0
        # The training sample: history as the engine saw it, the action, the real observation.
        assert pair.sample.observation == pair.real
        assert pair.sample.action == pair.action
    assert mcp[1].sample.trajectory.turns[0].observation == mcp[0].real  # the session's history
    assert {p.sample.trajectory.domain for p in mcp} == {"mcp"}
    assert {p.sample.trajectory.domain for p in lg} == {"terminal"}
    for log in (lg_log, mcp_log):
        assert log.stat().st_mode & 0o077 == 0

    # Both logs are training data as they are: one sample per line, the real result the target.
    records = list(read_training_records([lg_log, mcp_log]))
    assert len(records) == 4
    assert all(isinstance(r, TurnSample) for _, r in records)
    assert [r.observation for _, r in records] == [p.real for p in lg + mcp]  # type: ignore[union-attr]


def _train(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    return rc, err.getvalue()


def _line(**overrides: Any) -> str:
    traj = Trajectory(domain="mcp", turns=[]).with_turn({"name": "t", "arguments": {}}, "ok")
    record: dict[str, Any] = {
        "source": "mcp",
        "run_id": "r",
        "tool_call_id": None,
        "tool": "t",
        "action": {"name": "t", "arguments": {}},
        "model": "m",
        "started_at": 1.0,
        "predicted": "ok",
        "predicted_outcome": "success",
        "real": "ok",
        "real_is_error": False,
        "divergence": 0.0,
        "would_execute": True,
        "outcome_agrees": True,
        "decision": None,
        "sample": TurnSample(trajectory=traj, turn_idx=1).model_dump(mode="json"),
    }
    record.update(overrides)
    return json.dumps({k: v for k, v in record.items() if v is not ...})


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (_line(real_is_error="perhaps"), "real_is_error"),
        (_line(source="crewai"), "source"),
        (_line(sample=...), "sample"),  # an old-format log: no training sample in it
        (json.dumps({"predicted": "x", "real": "y"}), "sample"),
    ],
)
def test_a_bad_shadow_line_is_one_error_naming_file_line_and_field(
    tmp_path: Path, bad: str, field: str
) -> None:
    data = tmp_path / "shadow.jsonl"
    data.write_text(_line() + "\n" + bad + "\n")
    rc, err = _train(["train", "--model", str(tmp_path), "--data", str(data), "--out", "o"])
    assert rc != 0
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert f"{data}:2" in err
    assert f"field {field!r}" in err
