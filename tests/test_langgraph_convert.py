"""Messages -> trajectory: actions per domain, observations, task, vetoes left out."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import StructuredTool

import aw_lookahead.langgraph as lg
from aw_lookahead.langgraph import (
    VETO_ID_PREFIX,
    DomainMap,
    messages_to_trajectory,
    tool_definitions,
)
from aw_lookahead.trajectory import Domain


def test_public_api_is_sorted() -> None:
    consts = sorted(n for n in lg.__all__ if n.isupper())
    assert lg.__all__ == consts + sorted(n for n in lg.__all__ if not n.isupper())  # ruff RUF022
    assert all(hasattr(lg, name) for name in lg.__all__)


def _conversation() -> list[object]:
    return [
        SystemMessage("You are careful."),
        HumanMessage("Fix the build."),
        AIMessage(
            "",
            tool_calls=[
                {"name": "bash", "args": {"command": "ls"}, "id": "a"},
                {"name": "read_file", "args": {"path": "x.py"}, "id": "b"},
                {"name": "bash", "args": {"command": "rm -rf /"}, "id": "c"},
                {"name": "bash", "args": {"command": "make"}, "id": "d"},  # not answered yet
            ],
        ),
        ToolMessage("$ ls\nx.py\n", tool_call_id="a", name="bash"),
        ToolMessage("print(1)", tool_call_id="b", name="read_file"),
        ToolMessage(
            "[lookahead] Blocked",
            tool_call_id="c",
            name="bash",
            status="error",
            id=f"{VETO_ID_PREFIX}1",
        ),
    ]


def test_terminal_and_mcp_actions_observations_and_task() -> None:
    traj = messages_to_trajectory(_conversation(), domain="terminal")  # type: ignore[arg-type]
    assert traj.domain is Domain.TERMINAL
    assert traj.task == "You are careful.\n\nFix the build."
    assert [t.action for t in traj.turns] == [
        [{"keystrokes": "ls\n", "duration": 1.0}],
        {"name": "read_file", "arguments": {"path": "x.py"}},
    ]
    assert [t.observation for t in traj.turns] == ["$ ls\nx.py\n", "print(1)"]
    assert traj.turns[0].metadata == {"tool_call_id": "a", "name": "bash", "status": "success"}


def test_domain_map_default_and_overrides() -> None:
    default = DomainMap()
    assert default.domain_of("bash") is Domain.TERMINAL
    assert default.domain_of("run_shell_command") is Domain.TERMINAL
    assert default.domain_of("read_file") is Domain.MCP
    custom = DomainMap(domains={"runner": "terminal", "bash": "mcp"}, default="search")
    assert custom.domain_of("runner") is Domain.TERMINAL
    assert custom.domain_of("bash") is Domain.MCP
    assert custom.domain_of("lookup") is Domain.SEARCH
    assert custom.action({"name": "runner", "args": {"cmd": "pwd"}}) == [
        {"keystrokes": "pwd\n", "duration": 1.0}
    ]
    # Mixed domains: the map's default unless every call is in one domain.
    assert messages_to_trajectory(_conversation()).domain is Domain.MCP  # type: ignore[arg-type]


def test_tool_definitions_carry_annotations() -> None:
    tool = StructuredTool.from_function(
        func=lambda path: path,
        name="read_file",
        description="Read a file.",
        metadata={"readOnlyHint": True},
    )
    [d] = tool_definitions([tool])
    assert d["name"] == "read_file"
    assert d["inputSchema"]["properties"]["path"]
    assert d["annotations"] == {"readOnlyHint": True}  # only what the tool states
    peek = StructuredTool.from_function(func=lambda x: x, name="peek", description="Peek.")
    [bare] = tool_definitions([peek])
    assert "annotations" not in bare  # MCP's defaults written out would say "destroys"


def test_domain_map_of_takes_a_map_or_its_overrides() -> None:
    """The adapters' ``domains=`` option: a ready map is used as is, a dict becomes one."""
    ready = DomainMap(default="search")
    assert DomainMap.of(ready) is ready
    built = DomainMap.of({"runner": "terminal"})
    assert built.domain_of("runner") is Domain.TERMINAL
    assert built.domain_of("fetch") is Domain.MCP
    assert DomainMap.of(None) == DomainMap()
