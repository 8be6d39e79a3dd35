"""Terminal training data: template tasks run in real bash sandboxes, split by family.

:func:`generate_terminal` draws ``n`` tasks from the registered families
(:data:`FAMILIES`, at least 50: files, text tools, pipes and redirections,
shell state, Python, git, make, unittest, tar/gzip, permissions), runs each in
a fresh :class:`~aw_lookahead.sandbox.TerminalSandbox` through
:func:`~aw_lookahead.sandbox.record_trajectory`, and writes
``train/validation/test.jsonl`` plus ``manifest.json`` with
:func:`~aw_lookahead.datagen.write_split` (test families are never trained
on), and ``agentworldbench/test.jsonl`` (one record per test turn).
:func:`generate_terminal_sync` is its blocking twin.

Guarantees:

* Deterministic: the same ``seed`` and ``n`` give byte-identical files on one
  machine, whatever ``workers`` is. Task ``i`` uses family
  ``order[i % len(families)]`` (``order`` a seeded shuffle) and its own
  ``random.Random``; git runs with a fixed author and dates, Python with a
  fixed hash seed. Each sandbox directory is written as ``/home/user`` in the
  observations, test-runner timings as ``0.000s``, and every action's
  ``duration`` is 1.0, so the scheduling of sandboxes never shows.
* Real: every observation is what bash printed for the command, apart from
  those two rewrites.
* Filtered like warm-up training: exact retries are dropped
  (:func:`~aw_lookahead.training.classify.retry_turns`), each turn carries its turn
  class, and a trajectory with no turn that training would keep is dropped.
* Each turn's metadata says whether its step is a deliberate mistake
  (``mistake``) and holds the real ``exit_code``; each trajectory's metadata
  holds ``family`` and ``index``.
"""

from __future__ import annotations

import asyncio
import random
import re
import shutil
import statistics
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from aw_lookahead._progress import ProgressCallback, line_progress
from aw_lookahead._sync import own_loop_twin
from aw_lookahead.agentworldbench import write_agentworldbench
from aw_lookahead.datagen.split import DatasetManifest, split_families, write_split
from aw_lookahead.errors import UsageError
from aw_lookahead.sandbox import record_trajectory
from aw_lookahead.training.classify import ClassifyConfig, classify_trajectory, retry_turns
from aw_lookahead.trajectory import Trajectory, TurnSample

from . import families  # noqa: F401 - importing it registers every family
from .spec import FAMILIES, TaskSpec

__all__ = [
    "FAMILIES",
    "GENERATOR",
    "HOME",
    "SANDBOX_ENV",
    "build_task",
    "family_order",
    "generate_terminal",
    "generate_terminal_sync",
    "normalise_output",
    "record_tasks",
    "stderr_progress",
]

GENERATOR = "aw_lookahead.datagen.terminal"
HOME = "/home/user"
"""How a sandbox's directory is written in the observations."""

SANDBOX_ENV: dict[str, str] = {
    "GIT_AUTHOR_NAME": "Ada Example",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_AUTHOR_DATE": "2025-01-15T10:00:00+00:00",
    "GIT_COMMITTER_NAME": "Ada Example",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_COMMITTER_DATE": "2025-01-15T10:00:00+00:00",
    "GIT_CONFIG_COUNT": "2",
    "GIT_CONFIG_KEY_0": "init.defaultBranch",
    "GIT_CONFIG_VALUE_0": "main",
    "GIT_CONFIG_KEY_1": "advice.detachedHead",
    "GIT_CONFIG_VALUE_1": "false",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "TZ": "UTC",
}
"""Environment added to every sandbox (fixed git identity and dates, Python hash seed)."""

_TIMING = re.compile(r"^(Ran \d+ tests?) in \d+\.\d+s$", re.MULTILINE)
Progress = ProgressCallback


def family_order(seed: int) -> list[str]:
    """The families in the order tasks cycle through them for ``seed``."""
    order = sorted(FAMILIES)
    random.Random(f"order:{seed}").shuffle(order)
    return order


def build_task(seed: int, index: int, order: Sequence[str] | None = None) -> tuple[str, TaskSpec]:
    """Task ``index`` of a run with ``seed``: its family name and spec."""
    names = list(order) if order is not None else family_order(seed)
    name = names[index % len(names)]
    return name, FAMILIES[name](random.Random(f"{seed}:{index}:{name}"))


def normalise_output(text: str, root: Path) -> str:
    """``text`` with the sandbox directory written as :data:`HOME` and test timings zeroed."""
    return _TIMING.sub(r"\1 in 0.000s", text.replace(str(root), HOME))


def _seed_files(root: Path, spec: TaskSpec) -> None:
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for rel, text in spec.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755 if rel in spec.executable else 0o644)


async def _record(
    seed: int,
    index: int,
    name: str,
    spec: TaskSpec,
    root: Path,
    timeout: float,  # noqa: ASYNC109 - the per-command limit of the sandbox
) -> Trajectory:
    await asyncio.to_thread(_seed_files, root, spec)
    try:
        traj = await record_trajectory(
            [s.command for s in spec.steps],
            task=spec.task,
            env=SANDBOX_ENV,
            root=root,
            timeout=timeout,
            id=f"terminal-{seed}-{index:05d}-{name}",
        )
    finally:
        await asyncio.to_thread(shutil.rmtree, root, True)
    for turn, step in zip(traj.turns, spec.steps, strict=False):
        turn.observation = normalise_output(turn.observation, root)
        turn.action = [{"keystrokes": step.command + "\n", "duration": 1.0}]
        turn.metadata = {
            "exit_code": turn.metadata.get("exit_code"),
            "timed_out": turn.metadata.get("timed_out", False),
            "mistake": step.mistake,
        }
    traj.metadata = {
        **traj.metadata,
        "generator": GENERATOR,
        "family": name,
        "index": index,
        "seed": seed,
    }
    return traj


def _filter(traj: Trajectory, stats: Counter[str]) -> Trajectory | None:
    """Drop exact retries, label turn classes, drop a trajectory training would not use."""
    retries = retry_turns(traj)
    if retries:
        stats["retry_turns_dropped"] += len(retries)
        traj = traj.model_copy(
            update={"turns": [t for i, t in enumerate(traj.turns) if i not in retries]}
        )
    decisions = classify_trajectory(traj, key=traj.id or "", config=ClassifyConfig())
    for turn, d in zip(traj.turns, decisions, strict=True):
        turn.metadata["turn_class"] = d.turn_class.value if d.turn_class else None
        stats[f"class_{turn.metadata['turn_class']}"] += 1
    if not any(d.kept for d in decisions):
        stats["trajectories_dropped"] += 1
        return None
    return traj


async def record_tasks(
    specs: Sequence[tuple[str, TaskSpec]],
    *,
    seed: int,
    workers: int = 2,
    timeout: float = 10.0,  # noqa: ASYNC109 - the per-command limit of the sandbox
    progress: Progress | None = None,
    stats: Counter[str] | None = None,
) -> list[Trajectory]:
    """Run each ``(family name, spec)`` in a fresh bash sandbox, ``workers`` at a time.

    Returns the trajectories in ``specs`` order, as training reads them: exact
    retries dropped, turn classes labelled, and a trajectory with no kept turn
    left out (``stats`` counts what was dropped and each class).
    """
    results: list[Trajectory | None] = [None] * len(specs)
    base = Path(tempfile.mkdtemp(prefix="aw-datagen-"))
    pending = iter(range(len(specs)))
    done = 0

    async def worker(slot: int) -> None:
        nonlocal done
        root = base / f"s{slot}"
        for i in pending:
            name, spec = specs[i]
            results[i] = await _record(seed, i, name, spec, root, timeout)
            done += 1
            if progress is not None:
                progress(done, len(specs))

    try:
        await asyncio.gather(*(worker(k) for k in range(min(workers, len(specs)))))
    finally:
        await asyncio.to_thread(shutil.rmtree, base, True)
    counts = stats if stats is not None else Counter()
    return [t for t in (_filter(r, counts) for r in results if r is not None) if t is not None]


async def generate_terminal(
    n: int,
    *,
    seed: int,
    out: str | Path,
    workers: int = 2,
    timeout: float = 10.0,  # noqa: ASYNC109
    progress: Progress | None = None,
) -> DatasetManifest:
    """Generate ``n`` tasks, run them ``workers`` at a time, write the split dataset to ``out``."""
    if n < 1:
        raise UsageError(f"--n must be at least 1, got {n}")
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, got {workers}")
    out_dir = Path(out)
    if await asyncio.to_thread(out_dir.is_file):
        raise UsageError(f"--out {out_dir} is a file; give a folder (it is created if missing)")
    order = family_order(seed)
    stats: Counter[str] = Counter()
    kept = await record_tasks(
        [build_task(seed, i, order) for i in range(n)],
        seed=seed,
        workers=workers,
        timeout=timeout,
        progress=progress,
        stats=stats,
    )
    assignment = split_families(sorted(FAMILIES), seed=seed)
    manifest = await asyncio.to_thread(
        write_split,
        out_dir,
        kept,
        assignment,
        domain="terminal",
        generator=GENERATOR,
        seed=seed,
        extra={"requested": n, "families": len(FAMILIES), **_summary(kept), **dict(stats)},
    )
    test = [t for t in kept if assignment[str(t.metadata["family"])] == "test"]
    samples = [
        TurnSample(trajectory=t, turn_idx=i, id=f"{t.id}-t{i}")
        for t in test
        for i in range(1, len(t.turns) + 1)
    ]
    await asyncio.to_thread(
        write_agentworldbench, out_dir / "agentworldbench" / "test.jsonl", samples
    )
    return manifest


generate_terminal_sync = own_loop_twin(generate_terminal, "aw-datagen-terminal")


def _summary(trajs: Sequence[Trajectory]) -> dict[str, object]:
    turns = [t for traj in trajs for t in traj.turns]
    mistakes = [t for t in turns if t.metadata.get("mistake")]
    failed = [t for t in mistakes if t.metadata.get("exit_code") != 0]
    chars = [sum(len(t.observation) for t in traj.turns) for traj in trajs]
    return {
        "mistake_share": round(len(mistakes) / len(turns), 4) if turns else 0.0,
        "mistakes_failing_share": round(len(failed) / len(mistakes), 4) if mistakes else 0.0,
        "turns_per_trajectory": round(len(turns) / len(trajs), 3) if trajs else 0.0,
        "median_observation_chars": statistics.median(chars) if chars else 0,
    }


def stderr_progress(label: str = "terminal") -> Progress:
    """A progress callback printing about twenty lines to stderr over a run."""
    return line_progress(label, "tasks")
