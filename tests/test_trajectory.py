"""Trajectory schema, JSONL I/O and the lossless AgentWorldBench mapping."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.agentworldbench import (
    load_turn_samples,
    read_agentworldbench,
    record_to_sample,
    sample_to_record,
    write_agentworldbench,
)
from aw_lookahead.errors import TrajectoryError
from aw_lookahead.trajectory import (
    Domain,
    JsonlWriter,
    Trajectory,
    Turn,
    TurnSample,
    read_trajectories,
    write_trajectories,
)

SYSTEM = "# Role\n\nYou simulate tools."

_ACT = "### Turn 1\n**Action:**\n```json\n"

# Shaped like published AgentWorldBench records: rendered turns, per-sample system prompt.
MCP_RECORD: dict[str, Any] = {
    "task": "mcp",
    "id": 145256090131919,
    "prompt": [
        _ACT + '{"name": "list_dir", "arguments": {"path": "/srv"}}\n```',
        _ACT.replace("1", "2") + '{"name": "read_file", "arguments": {"path": "/srv/a"}}\n```',
        _ACT.replace("1", "3") + '{"name": "delete", "arguments": {"path": "/srv/a"}}\n```',
    ],
    "response": [
        '**Environment Observation:**\n{"entries": ["a", "b"]}',
        "**Environment Observation:**\nhello",
        '**Environment Observation:**\n{"isError": true, "content": "permission denied"}',
    ],
    "current_prompt": (
        _ACT.replace("1", "2") + '{"name": "read_file", "arguments": {"path": "/srv/a"}}\n```'
    ),
    "system_str": SYSTEM,
    "turn_idx": 2,
    "total_turns": 3,
}

TERMINAL_RECORD: dict[str, Any] = {
    "task": "lwm/terminal",
    "id": "t-7",
    "prompt": (
        "### Turn 1\n**Task Instruction:**\nCount files\n\n**Current State:**\n$ \n\n"
        '**Action:**\n```json\n[{"keystrokes": "ls | wc -l\\n", "duration": 0.5}]\n```'
    ),
    "response": "**Environment Observation:**\n$ ls | wc -l\n3",
    "system_str": "",
    "turn_idx": 1,
    "source": "handmade",
    "difficulty": {"level": 2},
}


def _write_lines(path: Path, records: list[Any]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_domain_parse_accepts_prefixes_and_case() -> None:
    assert Domain.parse("lwm/Terminal") is Domain.TERMINAL
    with pytest.raises(TrajectoryError, match=r"unknown domain 'shell'.*terminal"):
        Domain.parse("shell")


def test_turn_samples_expand_each_turn_with_its_context() -> None:
    traj = Trajectory(
        domain="terminal",
        task="t",
        turns=[Turn(action=f"cmd{i}", observation=f"out{i}") for i in range(3)],
    )
    samples = traj.turn_samples()
    assert [s.turn_idx for s in samples] == [1, 2, 3]
    assert [len(s.history.turns) for s in samples] == [0, 1, 2]
    assert samples[2].action == "cmd2"
    assert samples[2].observation == "out2"
    assert samples[1].history.turns[0].observation == "out0"


def test_sample_rejects_turn_index_past_the_end() -> None:
    traj = Trajectory(domain="os", turns=[Turn(action="a", observation="b")])
    with pytest.raises(ValueError, match="turn_idx 2 is past the last turn"):
        TurnSample(trajectory=traj, turn_idx=2)


def test_trajectories_round_trip_through_jsonl(tmp_path: Path) -> None:
    trajs = [
        Trajectory(
            domain="mcp",
            task="read a file",
            tools=[{"name": "read_file", "inputSchema": {"type": "object"}}],
            turns=[
                Turn(
                    action={"name": "read_file", "arguments": {"path": "x"}},
                    observation="ok",
                    metadata={"exit": 0},
                )
            ],
            id="a",
        ),
        Trajectory(domain="terminal", turns=[Turn(action="ls\nécho", observation="a\nb")]),
    ]
    path = tmp_path / "t.jsonl"
    assert write_trajectories(path, trajs) == 2
    assert list(read_trajectories(path)) == trajs
    assert len(path.read_text().splitlines()) == 2


def test_bad_json_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"domain": "terminal", "turns": []}\n\n{"domain": "terminal", "turns": [\n')
    with pytest.raises(TrajectoryError) as info:
        list(read_trajectories(path))
    assert f"{path}:3" in str(info.value)
    assert info.value.line == 3


def test_bad_field_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = {"domain": "terminal", "turns": [{"action": "ls", "observation": "a"}]}
    bad = {"domain": "terminal", "turns": [{"action": "ls", "observation": "a"}, {"action": "x"}]}
    _write_lines(path, [good, bad])
    with pytest.raises(TrajectoryError) as info:
        list(read_trajectories(path))
    assert info.value.line == 2
    assert info.value.field == "turns.1.observation"
    assert str(path) in str(info.value)


def test_unknown_domain_in_file_is_reported_with_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    _write_lines(path, [{"domain": "shell", "turns": []}])
    with pytest.raises(TrajectoryError, match=r"bad\.jsonl:1.*domain.*unknown domain 'shell'"):
        list(read_trajectories(path))


def test_agentworldbench_round_trip_is_lossless(tmp_path: Path) -> None:
    odd = dict(MCP_RECORD, id="x-1", current_prompt="### Turn 2\n**Action:**\nsomething else")
    odd.pop("total_turns")
    records = [MCP_RECORD, TERMINAL_RECORD, odd]
    src = tmp_path / "mcp_test.jsonl"
    _write_lines(src, records)
    samples = list(read_agentworldbench(src))
    out = tmp_path / "out.jsonl"
    assert write_agentworldbench(out, samples) == 3
    again = [json.loads(line) for line in out.read_text().splitlines()]
    assert again == records


def test_agentworldbench_import_recovers_actions_and_observations() -> None:
    sample = record_to_sample(MCP_RECORD)
    assert sample.trajectory.domain is Domain.MCP
    assert sample.trajectory.system_prompt == SYSTEM
    assert sample.action == {"name": "read_file", "arguments": {"path": "/srv/a"}}
    assert sample.observation == "hello"
    assert sample.history.turns[0].observation == '{"entries": ["a", "b"]}'
    term = record_to_sample(TERMINAL_RECORD)
    assert term.trajectory.task == "Count files"
    assert term.trajectory.initial_state == "$"
    assert term.action == [{"keystrokes": "ls | wc -l\n", "duration": 0.5}]


def test_our_trajectories_export_to_agentworldbench_and_back() -> None:
    traj = Trajectory(
        domain="terminal",
        task="make a dir",
        turns=[
            Turn(action=[{"keystrokes": "mkdir d\n", "duration": 0.1}], observation="$ mkdir d"),
            Turn(action=[{"keystrokes": "ls\n", "duration": 0.1}], observation="$ ls\nd"),
        ],
    )
    record = sample_to_record(TurnSample(trajectory=traj, turn_idx=2, id=7))
    assert record["prompt"][0].startswith("### Turn 1\n**Task Instruction:**\nmake a dir")
    assert record["response"][1] == "**Environment Observation:**\n$ ls\nd"
    assert record["current_prompt"] == record["prompt"][1]
    assert "Terminal world model" in record["system_str"]
    back = record_to_sample(record)
    assert back.action == traj.turns[1].action
    assert back.observation == "$ ls\nd"
    assert back.trajectory.task == "make a dir"


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"task": 3}, "task"),
        ({"prompt": [1, 2]}, "prompt"),
        ({"turn_idx": 0}, "turn_idx"),
        ({"turn_idx": 9}, "turn_idx"),
        ({"system_str": ["x"]}, "system_str"),
    ],
)
def test_bad_agentworldbench_records_name_the_field(
    tmp_path: Path, patch: dict[str, Any], field: str
) -> None:
    path = tmp_path / "x_test.jsonl"
    _write_lines(path, [MCP_RECORD, dict(MCP_RECORD, **patch)])
    with pytest.raises(TrajectoryError) as info:
        list(read_agentworldbench(path))
    assert info.value.line == 2
    assert info.value.field == field


def test_load_turn_samples_detects_both_formats(tmp_path: Path) -> None:
    traj = Trajectory(domain="web", turns=[Turn(action="a", observation="b")] * 2)
    _write_lines(tmp_path / "a.jsonl", [traj.model_dump(mode="json"), MCP_RECORD])
    samples = list(load_turn_samples(tmp_path))
    assert [s.trajectory.domain for s in samples] == [Domain.WEB, Domain.WEB, Domain.MCP]
    (tmp_path / "b.jsonl").write_text('{"foo": 1}\n')
    with pytest.raises(TrajectoryError, match=r"b\.jsonl:1: neither a trajectory"):
        list(load_turn_samples(tmp_path))


def test_writer_killed_mid_run_leaves_only_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    script = textwrap.dedent(
        f"""
        import sys
        from aw_lookahead.trajectory import JsonlWriter, Trajectory, Turn
        w = JsonlWriter({str(path)!r})
        big = "x" * 200_000
        i = 0
        while True:
            w.write(Trajectory(domain="terminal", turns=[Turn(action=str(i), observation=big)]))
            i += 1
            if i == 3:
                print("ready", flush=True)
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    # Linux may stop a large write part way when a fatal signal arrives (a busy machine
    # makes it likely), so only the last line can be torn; the next writer repairs it.
    torn = not path.read_bytes().endswith(b"\n")
    JsonlWriter(path).close()
    assert path.with_name(path.name + ".torn").exists() == torn
    trajs = list(read_trajectories(path))
    assert len(trajs) >= 3
    assert [t.turns[0].action for t in trajs] == [str(i) for i in range(len(trajs))]
    assert path.read_bytes().endswith(b"\n")


def test_writer_appends_and_refuses_after_close(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    with JsonlWriter(path) as w:
        w.write({"a": 1})
    with JsonlWriter(path) as w:
        w.write({"a": 2})
    assert path.read_text().splitlines() == ['{"a": 1}', '{"a": 2}']
    with pytest.raises(ValueError, match="closed"):
        w.write({"a": 3})


def test_appending_after_a_torn_line_moves_the_fragment_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "shadow.jsonl"
    whole = Trajectory(domain="terminal", turns=[Turn(action="ls", observation="a\n")])
    path.write_text(whole.model_dump_json() + "\n" + '{"domain": "terminal", "tur')
    with JsonlWriter(path) as w:
        w.write(Trajectory(domain="terminal", turns=[Turn(action="pwd", observation="/\n")]))
    assert [t.turns[0].action for t in read_trajectories(path)] == ["ls", "pwd"]
    torn = path.with_name("shadow.jsonl.torn")
    assert torn.read_text() == '{"domain": "terminal", "tur\n'
    assert any(
        "torn line" in r.getMessage() and str(torn) in r.getMessage() for r in caplog.records
    )
    assert (torn.stat().st_mode & 0o777) == 0o600


def test_a_file_of_one_torn_line_keeps_its_fragment(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    path.write_bytes(b'{"a": ' + b"1" * 100_000)  # no newline anywhere, longer than a block
    with JsonlWriter(path) as w:
        w.write({"a": 2})
    assert path.read_text() == '{"a": 2}\n'
    assert path.with_name("w.jsonl.torn").read_bytes() == b'{"a": ' + b"1" * 100_000 + b"\n"


def test_an_existing_file_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    path.write_text('{"a": 1}\n')
    path.chmod(0o644)
    with JsonlWriter(path) as w:
        w.write({"a": 2})
    assert (path.stat().st_mode & 0o777) == 0o600
    with JsonlWriter(path, append=False) as w:
        w.write({"a": 3})
    assert path.read_text() == '{"a": 3}\n'
