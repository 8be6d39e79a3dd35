"""Ground truth from a real environment: run scripted commands, write AgentWorldBench samples.

A *record script* is plain text. ``# task: <instruction>`` starts a new
trajectory; every other non-blank line that does not start with ``#`` is one
command (one turn). Each trajectory runs in its own fresh
:class:`~aw_lookahead.sandbox.TerminalSandbox` (private temp dir, per-command
time limit, network off where the machine allows it), and every turn becomes
one AgentWorldBench record (the turn the target, earlier turns the context),
so users build a benchmark from their own environment.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path

from aw_lookahead._jsonl import read_text_file
from aw_lookahead.agentworldbench import write_agentworldbench
from aw_lookahead.errors import UsageError
from aw_lookahead.sandbox import record_trajectory
from aw_lookahead.trajectory import Trajectory, TurnSample

__all__ = ["ScriptTask", "parse_record_script", "record_script"]

_TASK = re.compile(r"^#\s*task:\s*(?P<task>.+)$", re.IGNORECASE)


@dataclass
class ScriptTask:
    """One trajectory of a record script: the instruction and its commands."""

    task: str
    commands: list[str] = field(default_factory=list)


def parse_record_script(text: str, *, source: str = "<script>") -> list[ScriptTask]:
    """Parse a record script; commands before the first ``# task:`` line are an error."""
    tasks: list[ScriptTask] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        m = _TASK.match(stripped)
        if m:
            tasks.append(ScriptTask(task=m.group("task").strip()))
        elif stripped and not stripped.startswith("#"):
            if not tasks:
                raise UsageError(
                    f"{source}:{lineno}: a command before the first '# task: ...' line; "
                    "start each trajectory with '# task: <instruction>'"
                )
            tasks[-1].commands.append(line.rstrip())
    tasks = [t for t in tasks if t.commands]
    if not tasks:
        raise UsageError(f"{source}: no commands; write '# task: ...' then one command per line")
    return tasks


async def record_script(
    script: str | Path,
    out: str | Path,
    *,
    timeout: float = 10.0,  # noqa: ASYNC109
    network: bool = False,
    append: bool = False,
) -> tuple[list[Trajectory], int]:
    """Run every task of ``script`` in a fresh sandbox; write one record per turn to ``out``.

    Returns the recorded trajectories and the number of records written.
    """
    path = Path(script)
    text = await asyncio.to_thread(read_text_file, path, what="record script")
    tasks = parse_record_script(text, source=str(path))
    trajectories = []
    for k, task in enumerate(tasks, start=1):
        traj = await record_trajectory(
            task.commands,
            task=task.task,
            timeout=timeout,
            network=network,
            id=f"{path.stem}-{k:02d}",
        )
        trajectories.append(traj)
    samples = [
        TurnSample(trajectory=t, turn_idx=i, id=f"{t.id}-t{i}")
        for t in trajectories
        for i in range(1, len(t.turns) + 1)
    ]
    written = write_agentworldbench(out, samples, append=append)
    return trajectories, written
