"""The trap suite's tasks are true to their labels, checked in a real sandbox.

Every ``failing`` candidate must really fail (non-zero exit) in the state the
``good`` path reached before it, and the ``good`` path must pass the task's
check; otherwise the trap suite would count a veto of a working command as a
catch.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from trap_tasks import ALL_TASKS, HELD_OUT, Task, select_tasks

from aw_lookahead.sandbox import TerminalSandbox


def test_there_are_at_least_ten_held_out_style_tasks_and_families_filter() -> None:
    assert len(HELD_OUT) >= 10
    assert len({t.name for t in ALL_TASKS}) == len(ALL_TASKS)
    assert {t.family for t in select_tasks(["git-commit"])} == {"git-commit"}
    with pytest.raises(SystemExit, match="unknown families"):
        select_tasks(["no-such-family"])


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.name)
async def test_failing_candidates_fail_and_the_good_path_passes(task: Task) -> None:
    async with TerminalSandbox(network=False) as sb:
        for command in task.setup:
            assert (await sb.run(command, timeout=30.0)).exit_code == 0, command
        for step in task.steps:
            for label, command in step:
                if label == "failing":  # in a subshell, so the probe leaves cd/export alone
                    probe = await sb.run(f"( {command} )", timeout=30.0)
                    assert probe.exit_code != 0, f"{command!r} succeeds: {probe.output!r}"
            good = next(command for label, command in step if label == "good")
            done = await sb.run(good, timeout=30.0)
            assert done.exit_code == 0, f"{good!r}: {done.output!r}"
        assert (await sb.run(task.check, timeout=30.0)).exit_code == 0
