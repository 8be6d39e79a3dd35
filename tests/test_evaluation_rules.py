"""Rule verifier tiers on real sandbox outputs, plus the MCP and GUI format checks."""

from __future__ import annotations

import json

import pytest

from aw_lookahead.evaluation import verify, verify_sample
from aw_lookahead.evaluation.rules.masking import mask
from aw_lookahead.sandbox import record_trajectory
from aw_lookahead.trajectory import TurnSample

# Deterministic, runtime (PID, date, ls -l metadata, temp path) and environment content.
COMMANDS = [
    "printf 'alpha\\nbeta\\n' > notes.txt",
    "cat notes.txt",
    'echo "pid $$"',
    "date",
    "mkdir logs && touch logs/a.log && ls -l logs",
    "pwd",
    "uname -s",
    "wc -l notes.txt",
]


@pytest.fixture(scope="module")
async def two_runs() -> tuple[list[TurnSample], list[str]]:
    first = await record_trajectory(COMMANDS, task="tiers", id="a")
    second = await record_trajectory(COMMANDS, task="tiers", id="b")
    samples = [TurnSample(trajectory=first, turn_idx=i) for i in range(1, len(COMMANDS) + 1)]
    return samples, [t.observation for t in second.turns]


@pytest.mark.integration
async def test_rerun_with_new_pids_and_times_still_passes(
    two_runs: tuple[list[TurnSample], list[str]],
) -> None:
    samples, rerun = two_runs
    changed = [s.observation != obs for s, obs in zip(samples, rerun, strict=True)]
    assert any(changed), "the two runs should differ in runtime metadata (pid, temp dir)"
    for sample, observation in zip(samples, rerun, strict=True):
        result = verify_sample(sample, observation)
        assert result.verdict == 1, (sample.action, result.summary())
        assert result.masked_exact == 1.0
    tiers = [verify_sample(s, o).tiers for s, o in zip(samples, rerun, strict=True)]
    assert sum(t["runtime"].total for t in tiers) >= 3
    assert sum(t["deterministic"].total for t in tiers) >= 3
    assert sum(t["environment"].total for t in tiers) >= 1


@pytest.mark.integration
async def test_changed_deterministic_line_fails(
    two_runs: tuple[list[TurnSample], list[str]],
) -> None:
    samples, rerun = two_runs
    cat = samples[1]
    assert "beta" in rerun[1]
    result = verify_sample(cat, rerun[1].replace("beta", "gamma"))
    assert result.verdict == 0
    assert result.tiers["deterministic"].issues
    assert 0.0 < result.line_f1 < 1.0


@pytest.mark.integration
async def test_runtime_value_in_wrong_format_fails(
    two_runs: tuple[list[TurnSample], list[str]],
) -> None:
    samples, _rerun = two_runs
    date_sample = samples[3]
    assert verify_sample(date_sample, "$ date\nyesterday afternoon\n").verdict == 0
    assert verify_sample(date_sample, "$ date\nMon Jan  5 10:00:00 UTC 2026\n").verdict == 1


@pytest.mark.integration
async def test_missing_command_echo_is_a_format_failure(
    two_runs: tuple[list[TurnSample], list[str]],
) -> None:
    samples, rerun = two_runs
    result = verify_sample(samples[1], rerun[1].split("\n", 1)[1])
    assert not result.format_ok
    assert result.verdict == 0


def test_masking_is_idempotent_and_typed() -> None:
    text = "at 2026-11-29T07:16:04Z id 123e4567-e89b-12d3-a456-426614174000 took 0.25s"
    once = mask(text)
    assert once == mask(once)
    assert "<TIMESTAMP>" in once
    assert "<UUID>" in once
    assert "<DURATION>" in once


def test_mcp_json_format_and_schema() -> None:
    truth = json.dumps({"content": [{"type": "text", "text": "3 files"}], "isError": False})
    action = {"name": "list_files", "arguments": {"path": "."}}
    assert verify("mcp", truth, truth, action=action).verdict == 1
    bad = verify("mcp", "files: 3", truth, action=action)
    assert not bad.format_ok
    assert bad.verdict == 0
    tools = [{"name": "list_files", "outputSchema": {"type": "object", "required": ["count"]}}]
    schema = verify("mcp", truth, truth, action=action, tools=tools)
    assert not schema.format_ok
    flipped = verify("mcp", truth.replace("false", "true"), truth, action=action)
    assert flipped.verdict == 0
    assert flipped.tiers["deterministic"].issues


def test_gui_tree_structure() -> None:
    truth = '<hierarchy><node id="1" text="OK"/><node id="2" text="Cancel"/></hierarchy>'
    assert verify("android", truth, truth).format_ok
    assert not verify("android", "the screen shows two buttons", truth).format_ok
    tree = "[1] window 'App'\n  [2] button 'OK'\n  [3] button 'Cancel'"
    assert verify("os", tree, tree).verdict == 1
    assert not verify("os", "[1] window\n          [2] button", tree).format_ok


@pytest.mark.parametrize("shell", [False, True])
@pytest.mark.parametrize(
    ("prediction", "truth"),
    [
        ("$ echo $$\n4242\n", "$ echo $$\n17\n"),
        ("a\nb\nb\n", "b\na\n"),
        ("", ""),
        ("done at 2024-01-02 10:00:00", "done at 2025-03-04 11:11:11\nextra"),
    ],
)
def test_partial_scores_are_the_two_scores_from_one_masking(
    prediction: str, truth: str, shell: bool
) -> None:
    from aw_lookahead.evaluation.rules.scores import line_f1, masked_exact, partial_scores

    assert partial_scores(prediction, truth, shell=shell) == (
        masked_exact(prediction, truth, shell=shell),
        line_f1(prediction, truth, shell=shell),
    )
