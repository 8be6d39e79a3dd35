"""Turn statistics and classes on constructed cases, keep ratios, retries, and a property test."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aw_lookahead.errors import ConfigError
from aw_lookahead.training.classify import (
    ClassifyConfig,
    TurnClass,
    classify_trajectory,
    classify_turn,
    keep_draw,
    retry_turns,
    strip_echo,
    turn_stats,
)
from aw_lookahead.trajectory import Trajectory

LONG_TEXT = (
    "Project Aurora is a small library for parsing sensor logs. It reads CSV and JSON "
    "files, validates timestamps, merges overlapping windows and writes compact Parquet "
    "summaries for later analysis by the dashboards team."
)


@pytest.mark.parametrize(
    ("action", "observation", "previous", "domain", "expected"),
    [
        pytest.param(
            "cat README.md", LONG_TEXT, "", "terminal", TurnClass.RETRIEVAL, id="retrieval"
        ),
        pytest.param(
            "ls -la",
            "a b c d e f g h i j",
            "a b c d e",
            "terminal",
            TurnClass.EXPANSION,
            id="expansion",
        ),
        pytest.param(
            "rm x.txt",
            "rm: cannot remove 'x.txt': No such file or directory",
            "",
            "terminal",
            TurnClass.ACTION,
            id="action",
        ),
        pytest.param(
            "sed -i s/1/2/ cfg",
            "name = foo\nvalue = 2\nmode = fast",
            "name = foo\nvalue = 1\nmode = fast",
            "terminal",
            TurnClass.TRANSFORM,
            id="transform",
        ),
        pytest.param(
            "save", "OK", "something else", "mcp", TurnClass.BOILERPLATE, id="stock-reply"
        ),
        pytest.param("mkdir d", "$ mkdir d\n", "x", "terminal", TurnClass.BOILERPLATE, id="empty"),
        pytest.param(
            "echo hello brave new world",
            "hello brave new world",
            "",
            "terminal",
            TurnClass.ECHO,
            id="echo",
        ),
        pytest.param(
            {"action": "tap", "x": 10},
            "screen: home",
            "screen: home",
            "android",
            TurnClass.NO_CHANGE,
            id="no-change-gui",
        ),
        pytest.param(
            "ls",
            "a.txt b.txt",
            "a.txt b.txt",
            "terminal",
            TurnClass.BOILERPLATE,
            id="same-text-non-gui",
        ),
    ],
)
def test_each_class_on_a_constructed_case(
    action: object, observation: str, previous: str, domain: str, expected: TurnClass
) -> None:
    cls, _ = classify_turn(action, observation, previous, domain=domain)  # type: ignore[arg-type]
    assert cls is expected


def test_shell_echo_of_the_command_is_not_an_echo_turn() -> None:
    # The sandbox prints "$ <command>" before the output; the count "2" is the information.
    action = [{"keystrokes": "grep -c TODO notes.txt\n", "duration": 1.0}]
    obs = "$ grep -c TODO notes.txt\n2\n"
    assert strip_echo(obs, action).split() == ["$", "2"]
    cls, stats = classify_turn(action, obs, "", domain="terminal")
    assert cls is TurnClass.ACTION
    assert stats.n_tokens == 1
    assert stats.novelty == 1.0


def test_statistics_on_a_known_pair() -> None:
    s = turn_stats("cat a", "a b c d", "c d e f")
    assert s.overlap == pytest.approx(1 / 4)  # a
    assert s.novelty == pytest.approx(1 / 4)  # b
    assert s.jaccard == pytest.approx(2 / 6)  # {c,d} / {a..f}
    assert s.length_ratio == pytest.approx(1.0)
    assert s.carried == pytest.approx(2 / 4)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text(), st.text())
def test_statistics_stay_in_range(action: str, observation: str, previous: str) -> None:
    s = turn_stats(action, observation, previous)
    for share in (s.overlap, s.novelty, s.jaccard, s.carried):
        assert 0.0 <= share <= 1.0
    assert math.isfinite(s.length_ratio)
    assert s.length_ratio >= 0.0
    assert s.overlap + s.novelty <= 1.0 + 1e-12
    cls, _ = classify_turn(action, observation, previous, domain="web")
    assert isinstance(cls, TurnClass)


def test_keep_ratios_defaults_overrides_and_errors() -> None:
    cfg = ClassifyConfig()
    assert cfg.ratio(TurnClass.ACTION) == 1.0
    assert cfg.ratio(TurnClass.TRANSFORM) == 0.5
    assert cfg.ratio(TurnClass.BOILERPLATE) == 0.1
    assert cfg.ratio(TurnClass.ECHO) == 0.05
    parsed = ClassifyConfig.parse_ratios(["echo=1", "action=0.25"])
    assert parsed.ratio(TurnClass.ECHO) == 1.0
    assert parsed.ratio(TurnClass.ACTION) == 0.25
    with pytest.raises(ConfigError, match="retrieval, expansion"):
        ClassifyConfig(keep_ratios={"chatter": 0.5})
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        ClassifyConfig(keep_ratios={"echo": 1.5})
    with pytest.raises(ConfigError, match="CLASS=RATIO"):
        ClassifyConfig.parse_ratios(["echo"])


def test_keep_draw_is_deterministic_and_roughly_uniform() -> None:
    draws = [keep_draw(7, f"traj-{i}", 3) for i in range(4000)]
    assert draws == [keep_draw(7, f"traj-{i}", 3) for i in range(4000)]
    assert all(0.0 <= d < 1.0 for d in draws)
    share = sum(d < 0.1 for d in draws) / len(draws)
    assert 0.08 < share < 0.12
    assert draws != [keep_draw(8, f"traj-{i}", 3) for i in range(4000)]


def _retry_trajectory() -> Trajectory:
    fail = "bash: ./build.sh: Permission denied"
    return Trajectory(
        domain="terminal",
        turns=[
            {"action": "ls", "observation": "build.sh src"},
            {"action": "./build.sh", "observation": fail},
            {"action": "./build.sh", "observation": fail},
            {"action": "./build.sh", "observation": fail},
            {"action": "chmod +x build.sh", "observation": ""},
            {"action": "./build.sh", "observation": "built 3 targets"},
        ],
    )


def test_retry_cycles_are_skipped_keeping_state_continuity() -> None:
    traj = _retry_trajectory()
    assert retry_turns(traj) == {2, 3}
    decisions = classify_trajectory(traj, key="t", config=ClassifyConfig(seed=1))
    assert [d.retry for d in decisions] == [False, False, True, True, False, False]
    assert all(not d.kept for d in decisions if d.retry)
    # The first failure stays (it is the state the fix responds to); the rerun after
    # the fix is a different observation, so it is no retry.
    assert decisions[1].turn_class is TurnClass.ACTION
    assert decisions[5].retry is False
    off = classify_trajectory(traj, key="t", config=ClassifyConfig(skip_retries=False))
    assert not any(d.retry for d in off)


def test_keep_decision_follows_the_ratio_per_class() -> None:
    traj = _retry_trajectory()
    none = classify_trajectory(
        traj, key="t", config=ClassifyConfig(keep_ratios={c: 0.0 for c in TurnClass})
    )
    assert not any(d.kept for d in none)
    every = classify_trajectory(
        traj, key="t", config=ClassifyConfig(keep_ratios={c: 1.0 for c in TurnClass})
    )
    assert [d.kept for d in every] == [not d.retry for d in every]
