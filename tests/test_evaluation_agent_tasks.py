"""The agent task suite's data: every task is real (its check fails after setup alone and
passes after its known solution, in the real sandbox) and its family was never trained on."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

import aw_lookahead.datagen.terminal.families  # noqa: F401 - registers every family
from aw_lookahead.datagen.terminal.spec import FAMILIES as GENERATOR_FAMILIES
from aw_lookahead.errors import ConfigError
from aw_lookahead.evaluation.agent_tasks import FAMILIES, TASKS, AgentTask, select_tasks
from aw_lookahead.sandbox import TerminalSandbox

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from trap_tasks import ALL_TASKS as TRAP_TASKS


async def _check_passes(sandbox: TerminalSandbox, task: AgentTask) -> bool:
    result = await sandbox.run(f"cd ~ && ( {task.check} )", timeout=60)
    return result.exit_code == 0


async def _verdicts(task: AgentTask) -> tuple[bool, bool]:
    async with TerminalSandbox() as sandbox:
        for command in task.setup:
            result = await sandbox.run(command, timeout=60)
            assert result.exit_code == 0, f"{task.name}: setup {command!r}: {result.output}"
        before = await _check_passes(sandbox, task)
        for command in task.solution:
            await sandbox.run(command, timeout=60)
        return before, await _check_passes(sandbox, task)


async def test_every_check_fails_after_setup_and_passes_after_the_solution() -> None:
    limit = asyncio.Semaphore(4)

    async def one(task: AgentTask) -> tuple[bool, bool]:
        async with limit:
            return await _verdicts(task)

    verdicts = await asyncio.gather(*(one(t) for t in TASKS))
    passed_early = [t.name for t, (before, _) in zip(TASKS, verdicts, strict=True) if before]
    unsolved = [t.name for t, (_, after) in zip(TASKS, verdicts, strict=True) if not after]
    assert passed_early == [], "a check passes with nothing done"
    assert unsolved == [], "a known solution does not pass its check"


def test_the_suite_is_large_enough_and_held_out_from_every_training_family() -> None:
    assert len(TASKS) >= 30
    assert len(FAMILIES) >= 6
    assert len({t.name for t in TASKS}) == len(TASKS)
    trained = set(GENERATOR_FAMILIES) | {t.family for t in TRAP_TASKS}
    assert len(GENERATOR_FAMILIES) > 40  # the registry was really loaded
    assert set(FAMILIES).isdisjoint(trained)


def test_select_tasks_filters_and_names_what_it_does_not_know() -> None:
    family = FAMILIES[0]
    picked = select_tasks([family])
    assert picked
    assert all(t.family == family for t in picked)
    named = select_tasks(names=[TASKS[-1].name])
    assert named == [TASKS[-1]]
    with pytest.raises(ConfigError, match="unknown task family 'nope'"):
        select_tasks(["nope"])
    with pytest.raises(ConfigError, match="unknown task 'nope'"):
        select_tasks(names=["nope"])
