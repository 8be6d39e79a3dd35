"""Non-shell tools by effect: annotations win; without them, name, schema and arguments decide.

The engine, router and judges are the real ones; the world model is a fault
(down) or a fake that predicts success for everything.
"""

from __future__ import annotations

from typing import Any

import pytest

from aw_lookahead.errors import ServerUnreachableError
from aw_lookahead.lookahead import DecisionKind, Lookahead, Outcome
from aw_lookahead.lookahead.routing import declared_annotations
from aw_lookahead.lookahead.tool_effects import tool_risk
from aw_lookahead.lookahead.types import veto_basis
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel


def _tool(name: str, props: tuple[str, ...] = ("path",), **extra: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": {p: {"type": "string"} for p in props}}
    return {
        "name": name,
        "description": extra.pop("description", ""),
        "inputSchema": schema,
        **extra,
    }


TOOLS = [
    _tool("get_weather", ("city",)),
    _tool("list_files"),
    _tool("search_docs", ("query",)),
    _tool("fetch_url", ("url", "method")),
    _tool("delete_path", ("path", "recursive")),
    _tool("http_request", ("url", "method")),
    _tool("write_note", ("path", "content")),
    _tool("get_or_reset", ("key",)),
    _tool("archive", ("path",), description="Permanently deletes the folder after upload."),
    _tool("run_command", ("command",), annotations={"destructiveHint": True}),
    _tool("delete_cache", ("key",), annotations={"destructiveHint": False}),
    _tool("read_blob", ("id",), annotations={"readOnlyHint": True}),
]
MCP = Trajectory(domain="mcp", tools=TOOLS)

RUNS_UNCHECKED = [
    ("get_weather", {"city": "Oslo"}),
    ("list_files", {"path": "."}),
    ("search_docs", {"query": "how to delete from a list"}),
    ("fetch_url", {"url": "https://x", "method": "GET"}),
    ("delete_cache", {"key": "k"}),  # annotations win over the name
    ("read_blob", {"id": "1"}),
]
BLOCKED_UNCHECKED = [
    ("delete_path", {"path": "data", "recursive": True}),
    ("http_request", {"url": "https://x/items/1", "method": "DELETE"}),
    ("fetch_url", {"url": "https://x/items/1", "method": "DELETE"}),
    ("fetch_url", {"url": "https://x/items/1", "method": "PUT"}),
    ("write_note", {"path": "n.txt", "content": "x"}),
    ("get_or_reset", {"key": "k"}),
    ("archive", {"path": "data"}),
    ("run_command", {"command": "rm -rf data"}),
    ("run_command", {"command": "ls -la"}),  # annotated destructive: annotations win
    ("list_files", {"path": ".", "recursive": True, "force": True}),
    ("no_such_tool", {}),
]
DESTROYS = [
    ("delete_path", {"path": "data", "recursive": True}),
    ("http_request", {"url": "https://x/items/1", "method": "DELETE"}),
    ("fetch_url", {"url": "https://x/items/1", "method": "delete"}),
    ("get_or_reset", {"key": "k"}),
    ("archive", {"path": "data"}),
    ("run_command", {"command": "bash -c 'rm -rf data'"}),
]


def _down(_t: Trajectory, _a: Action) -> str:
    raise ServerUnreachableError("http://127.0.0.1:9/v1")


def _calls(pairs: list[tuple[str, dict[str, Any]]]) -> list[Action]:
    return [{"name": n, "arguments": a} for n, a in pairs]


async def test_model_down_runs_read_only_looking_tools_and_blocks_the_rest() -> None:
    lk = Lookahead(FunctionWorldModel(_down))
    ran = await lk.gate(MCP, _calls(RUNS_UNCHECKED))
    assert [d.kind for d in ran] == [DecisionKind.UNSIMULATED] * len(RUNS_UNCHECKED), [
        d.reason for d in ran
    ]
    blocked = await lk.gate(MCP, _calls(BLOCKED_UNCHECKED))
    assert [d.kind for d in blocked] == [DecisionKind.VETO] * len(BLOCKED_UNCHECKED), [
        d.reason for d in blocked
    ]
    assert all("could not be checked" in d.reason for d in blocked)


async def test_model_up_predicting_success_still_flags_inferred_destruction() -> None:
    lk = Lookahead(FunctionWorldModel(lambda _t, _a: '{"ok": true}', model_id="always-ok"))
    decisions = await lk.gate(MCP, _calls(DESTROYS))
    for d in decisions:
        assert d.kind is DecisionKind.VETO, d.reason
        assert d.outcome is Outcome.RISKY
        assert any(s.name == "risk.destructive_tool" for s in d.signals)
        assert veto_basis(d) == "action"  # read from the action, not the prediction
    fine = await lk.gate(MCP, _calls([*RUNS_UNCHECKED, ("run_command", {"command": "ls -la"})]))
    assert all(d.kind is DecisionKind.EXECUTE for d in fine), [d.reason for d in fine]


def test_an_explicit_destructive_hint_counts_even_beside_the_other_three() -> None:
    """Issue 46: all four hints stated (MCP's defaults) are no longer "no annotations"."""
    defaults = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}
    all_four = {"annotations": {**defaults, "openWorldHint": True}}
    assert declared_annotations(all_four) == {
        "read_only_hint": False,
        "destructive_hint": True,
        "idempotent_hint": False,
        "open_world_hint": True,
    }
    risk = tool_risk({**_tool("get_info", ("id",)), **all_four}, "get_info", {"id": "1"})
    assert (risk.kind, risk.inferred) == ("destroys", False)
    both = {
        **_tool("peek", ("id",)),
        "annotations": {"readOnlyHint": True, "destructiveHint": True},
    }
    assert tool_risk(both, "peek", {"id": "1"}).kind == "destroys"
    assert declared_annotations({"name": "x"}) is None


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("getWeather", "read_only"),
        ("ListUsers", "read_only"),
        ("dropTable", "destroys"),
        ("purge-queue", "destroys"),
        ("update_user", "unknown"),
        ("get_and_set", "unknown"),
    ],
)
def test_names_in_any_case_style(name: str, kind: str) -> None:
    assert tool_risk(_tool(name, ("id",)), name, {"id": "1"}).kind == kind


def test_langchain_tools_without_metadata_are_inferred() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.tools import StructuredTool

    from aw_lookahead.langgraph.convert import tool_definitions

    def get_weather(city: str) -> str:
        """Weather for a city."""
        return city

    [definition] = tool_definitions([StructuredTool.from_function(get_weather)])
    assert tool_risk(definition, "get_weather", {"city": "Oslo"}).kind == "read_only"
