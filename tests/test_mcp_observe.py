"""The proxy looks at the real filesystem server's state before it simulates a call.

Misspelt and missing paths in reads, edits, listings and moves are vetoed by observation
(certain, with the nearest names that exist); legitimate writes are forwarded. The world
model here always predicts success, so every veto below comes from looking.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client

from aw_lookahead.mcp import Downstream, LookaheadProxy, ProxyConfig, ProxyMode
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel

pytestmark = pytest.mark.integration


def succeeds(trajectory: Trajectory, action: Action) -> str:
    assert isinstance(action, dict)
    return f"Successfully ran {action['name']}"


def text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def _tree(root: Path) -> None:
    (root / "notes.txt").write_text("hello\n")
    (root / "report.md").write_text("# r\n")
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print(1)\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("guide\n")


def _wrong(root: Path) -> list[tuple[str, dict[str, Any], str | None]]:
    """(tool, arguments, a name the veto must suggest or None)."""
    r = str(root)
    return [
        ("read_text_file", {"path": f"{r}/ntoes.txt"}, f"{r}/notes.txt"),
        ("read_text_file", {"path": f"{r}/report.txt"}, f"{r}/report.md"),
        ("read_text_file", {"path": f"{r}/scr/main.py"}, f"{r}/src/main.py"),
        ("read_text_file", {"path": f"{r}/src/mian.py"}, f"{r}/src/main.py"),
        ("read_file", {"path": f"{r}/docs/guid.md"}, f"{r}/docs/guide.md"),
        ("get_file_info", {"path": f"{r}/nots.txt"}, f"{r}/notes.txt"),
        (
            "edit_file",
            {"path": f"{r}/src/mains.py", "edits": [{"oldText": "1", "newText": "2"}]},
            f"{r}/src/main.py",
        ),
        ("edit_file", {"path": f"{r}/notes.md", "edits": [{"oldText": "h", "newText": "H"}]}, None),
        ("list_directory", {"path": f"{r}/dcos"}, f"{r}/docs"),
        ("list_directory", {"path": f"{r}/build"}, None),
        ("directory_tree", {"path": f"{r}/srcs"}, f"{r}/src"),
        ("search_files", {"path": f"{r}/doc", "pattern": "*.md"}, f"{r}/docs"),
        ("move_file", {"source": f"{r}/notse.txt", "destination": f"{r}/n2.txt"}, f"{r}/notes.txt"),
        ("move_file", {"source": f"{r}/notes.txt", "destination": f"{r}/archive/notes.txt"}, None),
        ("move_file", {"source": f"{r}/notes.txt", "destination": f"{r}/report.md"}, None),
        ("write_file", {"path": f"{r}/dosc/new.md", "content": "x"}, f"{r}/docs/new.md"),
        ("write_file", {"path": f"{r}/out/result.txt", "content": "x"}, None),
        ("read_media_file", {"path": f"{r}/logo.png"}, None),
        (
            "edit_file",
            {"path": f"{r}/docs/guide.txt", "edits": [{"oldText": "g", "newText": "G"}]},
            f"{r}/docs/guide.md",
        ),
        ("get_file_info", {"path": f"{r}/src/main.pyc"}, f"{r}/src/main.py"),
    ]


def _right(root: Path) -> list[tuple[str, dict[str, Any]]]:
    r = str(root)
    return [
        ("write_file", {"path": f"{r}/new.txt", "content": "a"}),
        ("write_file", {"path": f"{r}/src/util.py", "content": "b"}),
        ("write_file", {"path": f"{r}/docs/faq.md", "content": "c"}),
        ("write_file", {"path": f"{r}/notes.txt", "content": "replaced"}),
        ("create_directory", {"path": f"{r}/build/out"}),
        ("write_file", {"path": f"{r}/build/out/log.txt", "content": "d"}),
        ("edit_file", {"path": f"{r}/report.md", "edits": [{"oldText": "# r", "newText": "# R"}]}),
        ("move_file", {"source": f"{r}/new.txt", "destination": f"{r}/docs/new.txt"}),
        ("write_file", {"path": f"{r}/docs/new2.txt", "content": "e"}),
        ("edit_file", {"path": f"{r}/src/main.py", "edits": [{"oldText": "1", "newText": "2"}]}),
    ]


async def test_the_proxy_vetoes_missing_paths_by_observation(
    mcp_fs_server: Path, tmp_path: Path
) -> None:
    _tree(tmp_path)
    proxy = LookaheadProxy(
        Downstream([str(mcp_fs_server), str(tmp_path)]),
        FunctionWorldModel(succeeds),
        ProxyConfig(mode=ProxyMode.GATE),
    )
    wrong = _wrong(tmp_path)
    vetoed = hinted = 0
    forwarded_ok = 0
    async with proxy, Client(proxy.server) as client:
        await client.list_tools()
        for name, arguments, hint in wrong:
            result = await client.call_tool(name, arguments)
            said = text(result)
            meta = (result.meta or {}).get("io.github.aw-lookahead/decision", {})
            if result.is_error and meta.get("basis") == "observed":
                vetoed += 1
                hinted += hint is not None and f"did you mean `{hint}`" in said
            else:
                print(f"not vetoed by observation: {name} {arguments}: {said[:300]}")
        assert proxy.downstream.forwarded == 0  # looking is not forwarding
        for name, arguments in _right(tmp_path):
            result = await client.call_tool(name, arguments)
            forwarded_ok += not result.is_error
            if result.is_error:
                print(f"blocked: {name} {arguments}: {text(result)[:300]}")
    with_hint = sum(h is not None for _, _, h in wrong)
    print(f"vetoed by observation {vetoed}/{len(wrong)}, did-you-mean {hinted}/{with_hint}")
    assert vetoed >= 0.9 * len(wrong)
    assert hinted >= 0.9 * with_hint
    assert forwarded_ok >= 9
    assert (tmp_path / "docs" / "new.txt").read_text() == "a"
    assert (tmp_path / "notes.txt").read_text() == "replaced"


async def test_without_observe_the_model_decides(mcp_fs_server: Path, tmp_path: Path) -> None:
    _tree(tmp_path)
    proxy = LookaheadProxy(
        Downstream([str(mcp_fs_server), str(tmp_path)]),
        FunctionWorldModel(succeeds),
        ProxyConfig(mode=ProxyMode.GATE, simulate="always", observe=False),
    )
    async with proxy, Client(proxy.server) as client:
        await client.list_tools()
        result = await client.call_tool("read_text_file", {"path": f"{tmp_path}/ntoes.txt"})
    assert result.is_error  # the real server's own error: it was forwarded
    assert "Blocked before execution" not in text(result)
    assert proxy.downstream.forwarded == 1


async def test_the_proxy_looks_up_memory_entities_before_adding_to_them(
    mcp_memory_server: Path, tmp_path: Path
) -> None:
    env = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    proxy = LookaheadProxy(
        Downstream([str(mcp_memory_server)], env=env),
        FunctionWorldModel(succeeds),
        ProxyConfig(mode=ProxyMode.GATE),
    )
    entity = {"name": "Ada Lovelace", "entityType": "person", "observations": ["mathematician"]}
    async with proxy, Client(proxy.server) as client:
        await client.list_tools()
        made = await client.call_tool("create_entities", {"entities": [entity]})
        assert not made.is_error, text(made)
        typo = await client.call_tool(
            "add_observations",
            {"observations": [{"entityName": "Ada Lovelance", "contents": ["wrote notes"]}]},
        )
        right = await client.call_tool(
            "add_observations",
            {"observations": [{"entityName": "Ada Lovelace", "contents": ["wrote notes"]}]},
        )
    meta = (typo.meta or {}).get("io.github.aw-lookahead/decision", {})
    assert typo.is_error
    assert meta.get("basis") == "observed"
    assert "did you mean `Ada Lovelace`?" in text(typo)
    assert not right.is_error, text(right)
    saved = (tmp_path / "memory.jsonl").read_text()
    assert "wrote notes" in saved
    assert "Lovelance" not in saved
