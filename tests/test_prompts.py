"""Message rendering (the contract's turn layout) and the reply parser."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aw_lookahead.errors import ConfigError
from aw_lookahead.prompts import PromptSet, default_prompts, parse_reply, render_messages
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


def test_mcp_prompt_lists_the_tools() -> None:
    tools = [{"name": "read_file", "description": "Read a file", "inputSchema": {"type": "object"}}]
    text = default_prompts().system(Domain.MCP, tools=tools)
    assert '"name": "read_file"' in text
    assert "{tool_definitions}" not in text
    assert "no tool definitions" in default_prompts().system("mcp")


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
