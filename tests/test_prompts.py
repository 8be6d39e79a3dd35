"""Message rendering (the contract's turn layout) and the reply parser."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aw_lookahead.errors import ConfigError
from aw_lookahead.prompts import (
    PromptSet,
    default_prompts,
    history_messages,
    parse_reply,
    render,
    render_messages,
)
from aw_lookahead.prompts.contract import parse_user_turn
from aw_lookahead.trajectory import Domain, Trajectory, Turn

KEYS = [{"keystrokes": "ls -la\n", "duration": 0.5}]


def _traj(n: int = 2) -> Trajectory:
    return Trajectory(
        domain="terminal",
        task="Tidy the folder",
        initial_state="$ pwd\n/work",
        turns=[
            Turn(
                action=[{"keystrokes": f"echo {i}\n", "duration": 0.1}],
                observation=f"$ echo {i}\n{i}",
            )
            for i in range(n)
        ],
    )


def test_layout_follows_the_contract() -> None:
    msgs = render_messages(_traj(2), KEYS)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[1]["content"] == (
        "### Turn 1\n**Task Instruction:**\nTidy the folder\n\n**Current State:**\n$ pwd\n/work\n\n"
        '**Action:**\n```json\n[{"keystrokes": "echo 0\\n", "duration": 0.1}]\n```'
    )
    assert msgs[2]["content"] == "**Environment Observation:**\n$ echo 0\n0"
    assert msgs[5]["content"] == (
        '### Turn 3\n**Action:**\n```json\n[{"keystrokes": "ls -la\\n", "duration": 0.5}]\n```'
    )
    assert "<predicted_observation>" in msgs[0]["content"]


def test_first_action_carries_task_and_state_when_history_is_empty() -> None:
    msgs = render_messages(_traj(0), "ls")
    assert msgs[-1]["content"].startswith("### Turn 1\n**Task Instruction:**\nTidy the folder")
    assert msgs[-1]["content"].endswith("**Action:**\nls")


def test_candidates_share_every_message_but_the_last() -> None:
    traj = _traj(5)
    a = render_messages(traj, "rm -rf /tmp/x")
    b = render_messages(traj, {"name": "tool", "arguments": {}})
    assert a[:-1] == b[:-1]
    assert a[-1] != b[-1]


def test_skip_turns_keeps_the_first_turn_and_original_numbers() -> None:
    msgs = render_messages(_traj(4), "ls", skip_turns=2)
    users = [m["content"] for m in msgs if m["role"] == "user"]
    assert [u.split("\n")[0] for u in users] == ["### Turn 1", "### Turn 4", "### Turn 5"]
    assert "Tidy the folder" in users[0]


def test_verbatim_prompts_and_system_override_are_used_as_is() -> None:
    traj = Trajectory(
        domain="mcp",
        system_prompt="",
        turns=[Turn(action="x", observation="y", prompt="RAW USER", response="RAW ASSISTANT")],
    )
    msgs = render_messages(traj, "z")
    assert msgs[:2] == [
        {"role": "user", "content": "RAW USER"},
        {"role": "assistant", "content": "RAW ASSISTANT"},
    ]


READ = {
    "name": "read_file",
    "description": "Read a file. Returns its text; fails outside the allowed folders.",
    "inputSchema": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Where. Absolute path."}},
    },
}
WRITE = {"name": "write_file", "description": "Write a file", "inputSchema": {"type": "object"}}


def _mcp(n: int = 0, **kw: object) -> Trajectory:
    turns = [
        Turn(action={"name": "read_file", "arguments": {"path": f"/p/{i}"}}, observation=f"t{i}")
        for i in range(n)
    ]
    return Trajectory(domain="mcp", tools=[READ, WRITE], turns=turns, **kw)  # type: ignore[arg-type]


def test_mcp_prompt_lists_only_tool_names_in_the_compact_layout() -> None:
    text = default_prompts().system(Domain.MCP, tools=[READ, WRITE])
    assert "Tools on this server: read_file, write_file." in text
    assert "Read a file" not in text
    assert "{tool_definitions}" not in text
    assert "no tool definitions" in default_prompts().system("mcp")


def test_full_layout_keeps_every_definition_in_the_system_prompt() -> None:
    full = PromptSet(tool_layout="full")
    text = full.system(Domain.MCP, tools=[READ, WRITE])
    assert '"name": "read_file"' in text
    assert '"name": "write_file"' in text
    msgs = render_messages(_mcp(2), {"name": "write_file", "arguments": {}}, prompts=full)
    assert not any("**Tool Definition:**" in m["content"] for m in msgs)
    with pytest.raises(ConfigError, match="tool_layout"):
        PromptSet(tool_layout="wide")  # type: ignore[arg-type]


def test_called_tool_is_defined_in_the_first_turn_that_calls_it() -> None:
    write = {"name": "write_file", "arguments": {"path": "/p/x", "content": "y"}}
    msgs = render_messages(_mcp(3), write)
    users = [m["content"] for m in msgs if m["role"] == "user"]
    assert users[0].startswith("### Turn 1\n**Tool Definition:**\n{")
    assert '"name":"read_file"' in users[0]
    assert "$schema" not in users[0]
    assert users[0].index("**Tool Definition:**") < users[0].index("**Action:**")
    assert all("**Tool Definition:**" not in u for u in users[1:3])
    assert '"name":"write_file"' in users[3]
    again = render_messages(_mcp(3).with_turn(write, "ok"), write)
    assert "**Tool Definition:**" not in again[-1]["content"]
    assert parse_user_turn(users[3]).action == write


def test_tool_context_keeps_the_shared_prefix_and_history_layout() -> None:
    traj = _mcp(3)
    a = render_messages(traj, {"name": "write_file", "arguments": {"path": "/a"}})
    b = render_messages(traj, {"name": "read_file", "arguments": {"path": "/b"}})
    assert a[:-1] == b[:-1]
    # An earlier step's full prompt is a prefix of the next step's history.
    step = traj.with_turn({"name": "write_file", "arguments": {"path": "/a"}}, "ok")
    nxt = render_messages(step, "x")
    assert nxt[: len(a)] == a
    assert history_messages(traj) == a[:-1]


def test_trimming_moves_the_definition_to_the_next_rendered_call() -> None:
    msgs = render_messages(_mcp(4), {"name": "read_file", "arguments": {}}, skip_turns=2)
    users = [m["content"] for m in msgs if m["role"] == "user"]
    assert [u.split("\n")[0] for u in users] == ["### Turn 1", "### Turn 4", "### Turn 5"]
    assert sum('"name":"read_file","description"' in u for u in users) == 1
    brief = render_messages(_mcp(0), {"name": "read_file", "arguments": {}}, brief_tools=True)
    assert "Read a file" in brief[-1]["content"]
    assert "fails outside" not in brief[-1]["content"]
    assert "Absolute path" not in brief[-1]["content"]


def test_benchmark_system_prompts_get_no_turn_definitions() -> None:
    msgs = render_messages(_mcp(1, system_prompt="BENCH"), {"name": "write_file", "arguments": {}})
    assert not any("**Tool Definition:**" in m["content"] for m in msgs)


def test_every_domain_has_its_own_prompt() -> None:
    texts = {d: default_prompts().system(d) for d in Domain}
    assert len(set(texts.values())) == len(Domain)


def test_overrides_from_a_folder(tmp_path: Path) -> None:
    (tmp_path / "terminal.md").write_text("TERM {tool_definitions}")
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "system_prompt.txt").write_text("WEB")
    prompts = PromptSet(tmp_path)
    assert prompts.system("terminal").startswith("TERM (no tool definitions")
    assert prompts.system("web") == "WEB"
    assert prompts.system("os") == default_prompts().system("os")
    with pytest.raises(ConfigError, match="does not exist"):
        PromptSet(tmp_path / "nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match="holds no prompt file"):
        PromptSet(empty)


# ----------------------------------------------------------------------------- incremental


def _full(traj: Trajectory, brief: bool = False) -> list[dict[str, str]]:
    return list(render._full_history(traj, None, 0, brief).messages)


_actions = st.one_of(
    st.sampled_from(["ls", "cat a.txt", "git status"]),
    st.builds(
        lambda name, path: {"name": name, "arguments": {"path": path}},
        st.sampled_from(["read_file", "write_file", "other"]),
        st.sampled_from(["/a", "/b"]),
    ),
    st.builds(lambda k: [{"keystrokes": k, "duration": 0.1}], st.sampled_from(["ls\n", "pwd\n"])),
)
_turns = st.lists(
    st.builds(
        Turn,
        action=_actions,
        observation=st.text(max_size=20),
        prompt=st.one_of(st.none(), st.just("RAW")),
    ),
    max_size=8,
)


@given(_turns, st.integers(0, 8), st.booleans(), st.sampled_from(["mcp", "terminal"]))
def test_incremental_history_is_the_full_rendering(
    turns: list[Turn], cut: int, brief: bool, domain: str
) -> None:
    """Each growth step, a branch off a remembered prefix, and a rebuilt turn render as in full."""
    base = Trajectory(domain=domain, task="t", initial_state="s", tools=[READ, WRITE])
    traj = base
    for turn in turns:
        traj = traj.model_copy(update={"turns": [*traj.turns, turn]})
        got = render._history(traj, None, 0, brief)
        assert list(got.messages) == _full(traj, brief)
        assert got.size_bytes == sum(len(m["content"].encode()) + 8 for m in got.messages)
    branch = traj.prefix(min(cut, len(turns))).with_turn("echo branch", "branch")
    assert list(render._history(branch, None, 0, brief).messages) == _full(branch, brief)
    if turns:
        rebuilt = [t.model_copy() for t in traj.turns]
        rebuilt[0] = rebuilt[0].model_copy(update={"observation": "changed"})
        again = traj.model_copy(update={"turns": rebuilt})
        assert list(render._history(again, None, 0, brief).messages) == _full(again, brief)


def test_history_keys_chain_and_tell_renderings_apart() -> None:
    traj = _mcp(3)
    key = render._history(traj, None, 0, False).key
    assert key == render._history(_mcp(3), None, 0, False).key, "equal content, equal key"
    longer = traj.with_turn("ls", "x")
    assert render._history(longer, None, 0, False).key not in (None, key)
    changed = traj.model_copy(update={"task": "another task"})
    assert render._history(changed, None, 0, False).key != key
    assert render._history(traj, None, 2, False).key is None, "trimmed renderings have none"


def test_a_rebuilt_turn_is_rendered_afresh() -> None:
    traj = _traj(3)
    before = history_messages(traj)
    turns = list(traj.turns)
    turns[1] = turns[1].model_copy(update={"observation": "rewritten"})
    after = history_messages(traj.model_copy(update={"turns": turns}))
    assert after != before
    assert after[:3] == before[:3]
    assert "rewritten" in after[4]["content"]


def test_handed_out_messages_are_copies() -> None:
    traj = _traj(2)
    history_messages(traj)[1]["content"] = "mutated"
    render_messages(traj, "ls")[1]["content"] = "mutated"
    assert history_messages(traj) == _full(traj)


# ----------------------------------------------------------------------------- parser


@pytest.mark.parametrize(
    ("content", "reasoning", "obs", "method"),
    [
        (
            "<think>hmm</think>\n<predicted_observation>\nA\n</predicted_observation>",
            None,
            "A",
            "tag",
        ),
        (
            "<predicted_observation>draft</predicted_observation> then "
            "<predicted_observation>final</predicted_observation>",
            None,
            "final",
            "tag",
        ),
        ("<think>a <think>b</think> c</think>X", None, "X", "raw"),
        (
            "reasoning opened by the template</think>\n**Environment Observation:**\nout",
            None,
            "out",
            "marker",
        ),
        ("<predicted_observation>\nhalf an answ", None, "half an answ", "tag_unclosed"),
        (
            "<predicted_observation>**Environment Observation:**\nB</predicted_observation>",
            None,
            "B",
            "tag",
        ),
        (
            "<think>never closed <predicted_observation>C</predicted_observation>",
            None,
            "C",
            "tag_in_thinking",
        ),
        ("<think>only thoughts", None, "", "empty"),
        ("", "server reasoning", "", "empty"),
        (None, None, "", "empty"),
    ],
)
def test_parser_cases(content: str | None, reasoning: str | None, obs: str, method: str) -> None:
    parsed = parse_reply(content, reasoning)
    assert parsed.observation == obs
    assert parsed.method == method


def test_parser_keeps_reasoning_from_field_and_think_blocks() -> None:
    parsed = parse_reply(
        "<think>inner</think><predicted_observation>o</predicted_observation>", "field"
    )
    assert parsed.reasoning == "field\n\ninner"
    assert parsed.observation == "o"


_TAGS = ["<think>", "</think>", "<predicted_observation>", "</predicted_observation>"]
_noise = st.text(max_size=200).filter(lambda s: not any(t in s.lower() for t in _TAGS))
_obs = st.text(min_size=1, max_size=200).filter(
    lambda s: (
        s.strip() != ""
        and "<" not in s
        and "**Environment Observation:**" not in s
        and s == s.strip()
    )
)
_wild = st.lists(st.one_of(st.text(max_size=40), st.sampled_from(_TAGS)), max_size=30).map("".join)


@given(_wild, st.one_of(st.none(), st.text(max_size=50)))
def test_parser_never_raises(content: str, reasoning: str | None) -> None:
    parsed = parse_reply(content, reasoning)
    assert isinstance(parsed.observation, str)


@given(_noise, _noise, _obs, _noise, _noise, st.booleans())
def test_parser_recovers_the_observation_from_thinking_noise(
    before: str, thought: str, obs: str, after: str, draft: str, nested: bool
) -> None:
    # Thinking may nest and may hold draft answers in tags; the answer comes after it.
    inner = f"<think>{thought}</think>" if nested else thought
    thinking = (
        f"<think>{thought}{inner}<predicted_observation>{draft}</predicted_observation></think>"
    )
    content = (
        f"{before}{thinking}{before}<predicted_observation>\n{obs}\n</predicted_observation>{after}"
    )
    assert parse_reply(content).observation == obs


@given(_noise, _obs)
def test_parser_recovers_after_a_template_opened_think(thought: str, obs: str) -> None:
    assert (
        parse_reply(f"{thought}</think>\n\n**Environment Observation:**\n{obs}").observation == obs
    )
