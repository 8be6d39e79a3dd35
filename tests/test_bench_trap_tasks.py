"""The trap suite's tasks are true to their labels, checked in a real sandbox.

Every ``failing`` candidate must really fail (non-zero exit) in the state the
``good`` path reached before it, and the ``good`` path must pass the task's
check; otherwise the trap suite would count a veto of a working command as a
catch. A ``destructive`` candidate, taken in place of the good command, must
leave the task unable to pass its check. The held-out tasks must belong to the
terminal generator's test families.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from trap_tasks import ALL_TASKS, HELD_OUT, TEST_FAMILIES, Task, select_tasks

from aw_lookahead.datagen.terminal import FAMILIES
from aw_lookahead.sandbox import TerminalSandbox


def test_held_out_tasks_come_from_the_generator_test_families_and_families_filter() -> None:
    assert len(HELD_OUT) >= 12
    assert len({t.name for t in ALL_TASKS}) == len(ALL_TASKS)
    assert set(TEST_FAMILIES) <= set(FAMILIES), "TEST_FAMILIES names an unknown generator family"
    held = {t.family for t in HELD_OUT}
    assert held <= set(TEST_FAMILIES), held - set(TEST_FAMILIES)
    assert len(held) >= 10
    assert {t.family for t in select_tasks(["files_symlink"])} == {"files_symlink"}
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


DESTRUCTIVE = [
    pytest.param(task, i, command, id=f"{task.name}-step{i + 1}")
    for task in ALL_TASKS
    for i, step in enumerate(task.steps)
    for label, command in step
    if label == "destructive"
]


@pytest.mark.parametrize(("task", "at", "command"), DESTRUCTIVE)
async def test_a_destructive_candidate_leaves_the_task_unfinishable(
    task: Task, at: int, command: str
) -> None:
    async with TerminalSandbox(network=False) as sb:
        for line in task.setup:
            assert (await sb.run(line, timeout=30.0)).exit_code == 0, line
        for i, step in enumerate(task.steps):
            chosen = command if i == at else next(c for label, c in step if label == "good")
            await sb.run(chosen, timeout=30.0)
        check = await sb.run(task.check, timeout=30.0)
        assert check.exit_code != 0, f"{command!r} still lets the check pass: {check.output!r}"
