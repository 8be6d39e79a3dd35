"""Risk routing: MCP annotations in every layout, the conservative terminal classifier."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from aw_lookahead.lookahead import RiskRouter, tool_annotations
from aw_lookahead.lookahead.routing import is_read_only_command
from aw_lookahead.trajectory import Trajectory

DEFAULTS = {
    "read_only_hint": False,
    "destructive_hint": True,
    "idempotent_hint": False,
    "open_world_hint": True,
}


@dataclass
class FakeLangChainTool:
    """The attributes a LangChain BaseTool exposes (name, metadata)."""

    name: str
    metadata: dict[str, Any] | None = field(default=None)


def test_tool_annotations_layouts() -> None:
    assert tool_annotations({"name": "t"}) == DEFAULTS
    camel = {"name": "t", "annotations": {"readOnlyHint": True, "openWorldHint": False}}
    assert tool_annotations(camel)["read_only_hint"] is True
    assert tool_annotations(camel)["open_world_hint"] is False
    snake = {"name": "t", "annotations": {"destructive_hint": False}}
    assert tool_annotations(snake) == {**DEFAULTS, "destructive_hint": False}
    flat = FakeLangChainTool("t", {"title": None, "readOnlyHint": True, "destructiveHint": None})
    assert tool_annotations(flat) == {**DEFAULTS, "read_only_hint": True}
    nested = FakeLangChainTool(
        "t", {"mcp": {"tool": {"annotations": {"read_only_hint": True}}, "server": {}}}
    )
    assert tool_annotations(nested)["read_only_hint"] is True
    assert tool_annotations(FakeLangChainTool("t")) == DEFAULTS


def test_router_mcp_actions() -> None:
    tools = [
        {"name": "read_file", "inputSchema": {}, "annotations": {"readOnlyHint": True}},
        {"name": "write_file", "inputSchema": {}, "annotations": {"readOnlyHint": False}},
        {"name": "bare", "inputSchema": {}},
    ]
    traj = Trajectory(domain="mcp", tools=tools)
    router = RiskRouter(tools=[FakeLangChainTool("lc_read", {"readOnlyHint": True})])
    assert router.route(traj, {"name": "read_file", "arguments": {"path": "a"}}).read_only
    assert not router.route(traj, {"name": "write_file", "arguments": {}}).read_only
    bare = router.route(traj, {"name": "bare", "arguments": {}})
    assert not bare.read_only
    assert "destructive" in bare.reason
    assert not router.route(traj, {"name": "unknown", "arguments": {}}).read_only
    assert router.route(traj, {"name": "lc_read", "args": {}}).read_only


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat README.md | grep -n foo | head -5",
        "git status && git log --oneline -5 && git diff HEAD~1",
        "find . -name '*.py' -type f",
        "sed -n 1,20p setup.py",
        "cd src; ls",
        "git branch -a",
        "sort names.txt | uniq -c",
    ],
)
def test_read_only_commands(command: str) -> None:
    read_only, reason = is_read_only_command(command)
    assert read_only, reason


@pytest.mark.parametrize(
    "command",
    [
        "ls > out.txt",
        "cat a 2>&1",
        "echo $(rm -rf /tmp/x)",
        "echo `whoami`",
        "find . -name '*.pyc' -delete",
        "find . -exec rm {} \\;",
        "sed -i s/a/b/ file",
        "sed 's/a/b/w out.txt' file",
        "cat a | tee b",
        "rm -rf build",
        "git push --force",
        "git branch -D feature",
        "git checkout -- .",
        "sort -o names.txt names.txt",
        "uniq in.txt out.txt",
        "python script.py",
        "sleep 10 &",
        "FOO=1",
        "",
    ],
)
def test_not_read_only_commands(command: str) -> None:
    read_only, _ = is_read_only_command(command)
    assert not read_only


def test_router_terminal_keystrokes() -> None:
    traj = Trajectory(domain="terminal")
    router = RiskRouter()
    assert router.route(traj, [{"keystrokes": "ls -la\n", "duration": 0.1}]).read_only
    assert not router.route(traj, [{"keystrokes": "rm -rf x\n", "duration": 0.1}]).read_only
    assert not router.route(traj, [{"keystrokes": "C-c", "duration": 0.1}]).read_only
    mixed = [{"keystrokes": "ls\n", "duration": 0.1}, {"keystrokes": "rm a\n", "duration": 0.1}]
    assert not router.route(traj, mixed).read_only
    assert router.route(Trajectory(domain="search"), "best pizza").read_only
    assert not router.route(Trajectory(domain="android"), {"action": "click", "id": 3}).read_only


def test_a_growing_history_reads_as_a_fresh_replay() -> None:
    # The editor state after a history is kept and extended a turn at a time; what each
    # action runs must be what a replay of the whole history from scratch gives.
    from aw_lookahead.lookahead import routing
    from aw_lookahead.lookahead.keystrokes import replays

    def keys(*items: str) -> list[dict[str, Any]]:
        return [{"keystrokes": k} for k in items]

    steps: list[Any] = [
        keys("echo one\n"),
        keys("rm -rf da"),  # unfinished: the next action continues it
        keys("ta", "Enter"),
        keys("!!\n"),
        "ls data",
        keys("^ls^cat\n"),
        keys("echo 'a\n"),
        keys("b'\n"),
        keys("Up", "Enter"),
        keys("fc -s echo=rm\n"),
        {"command": "echo two"},
        keys("!-2\n"),
    ]
    history: list[Any] = []
    for action in steps:
        stepped = routing.typed_text(action, history)
        for memo in (replays._PASTS, replays._READ, replays._TRAJECTORIES):
            memo.clear()
        fresh = routing.typed_text(action, history)
        assert stepped == fresh, action
        history.append(action)
    continued = routing.typed_text(steps[2], steps[:2])
    assert continued is not None
    assert "rm -rf data" in continued.text


def test_plain_text_reads_the_same_on_the_short_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Plain text with no key, expansion or fc that a setting or the history could change is
    # read once, not once per setting from the history's state: the reading must not differ.
    import re

    from aw_lookahead.lookahead import routing
    from aw_lookahead.lookahead.keystrokes import replays
    from shell_corpus_support import DESTROYS, HARMLESS, OVERWRITES
    from shell_indirect_corpus_support import INDIRECT, KEYSTROKES, READS

    texts = [*DESTROYS, *OVERWRITES, *HARMLESS, *INDIRECT, *READS]
    texts += ["echo a\tb", "ls\n\ncat x", "f'c' -s rm=ls", "echo !!", "^a^b"]
    unfinished = [[{"keystrokes": "rm -rf "}]], [[{"keystrokes": "ls da"}, {"keystrokes": "Tab"}]]
    histories: list[list[Any]] = [[], ["echo one", "ls data"], *unfinished]
    histories += [h for h, _ in KEYSTROKES[:8]]
    short = {}
    for history in histories:
        for text in texts:
            short[(id(history), text)] = routing.typed_text(text, history)
    monkeypatch.setattr(replays, "_SETTING_KEYS", re.compile(r"[\s\S]"))  # never short
    for memo in (replays._PASTS, replays._READ, replays._TRAJECTORIES):
        memo.clear()
    for history in histories:
        for text in texts:
            assert routing.typed_text(text, history) == short[(id(history), text)], text
    assert len(texts) > 300


def test_a_trajectory_reads_as_its_actions_and_a_grown_one_is_read_again() -> None:
    from aw_lookahead.lookahead.routing import typed_text

    traj = Trajectory(domain="terminal").with_turn([{"keystrokes": "rm -rf da"}], "")
    action = [{"keystrokes": "ta\n"}]
    assert typed_text(action, traj) == typed_text(action, [t.action for t in traj.turns])
    continued = typed_text(action, traj)
    assert continued is not None
    assert "rm -rf data" in continued.text
    traj.turns.append(traj.turns[0].model_copy(update={"action": [{"keystrokes": "\n"}]}))
    after = typed_text(action, traj)  # the same object, grown in place: read again
    assert after is not None
    assert "rm -rf data" not in after.text
