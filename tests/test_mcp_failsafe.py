"""The proxy's gate when the world model is down: the same fail-safe rule as the engine.

Real filesystem MCP server (npm), a world model that fails (fault injection).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client

from aw_lookahead.errors import ServerUnreachableError
from aw_lookahead.mcp import Downstream, LookaheadProxy, ProxyConfig
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel

pytestmark = pytest.mark.integration

META = "io.github.aw-lookahead/decision"
NOTE = "[lookahead] Note: this ran WITHOUT a lookahead check"


def down(_t: Trajectory, _a: Action) -> str:
    raise ServerUnreachableError("http://127.0.0.1:9/v1")


def _text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.parametrize("note", [True, False])
async def test_gate_blocks_destructive_and_notes_unchecked_calls(
    mcp_fs_server: Path, tmp_path: Path, note: bool
) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    target = tmp_path / "new.txt"
    config = ProxyConfig(simulate="always", note_unchecked=note)  # default on_error: fail_safe
    proxy = LookaheadProxy(
        Downstream([str(mcp_fs_server), str(tmp_path)]), FunctionWorldModel(down), config
    )
    async with proxy, Client(proxy.server) as client:
        read = await client.call_tool("read_text_file", {"path": str(tmp_path / "notes.txt")})
        write = await client.call_tool("write_file", {"path": str(target), "content": "x"})
    assert not read.is_error
    assert "hello" in _text(read)
    assert (read.meta or {})[META]["kind"] == "unsimulated"
    assert (NOTE in _text(read)) is note
    assert write.is_error  # write_file is destructiveHint: never forwarded unchecked
    assert "could not be checked" in _text(write)
    assert not target.exists()
    assert proxy.downstream.forwarded == 1
    assert proxy.engine.stats.causes == {"unreachable": 2}
