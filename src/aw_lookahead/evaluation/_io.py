"""Result files of an evaluation run: append-only JSONL, latest record per id wins.

``predictions.jsonl`` (``eval run``) and ``judged.jsonl`` (``eval judge``)
hold one JSON object per line with at least ``id`` and ``status``. Lines are
written whole (:class:`~aw_lookahead.trajectory.JsonlWriter`), so a run killed
mid-way leaves a valid file; a rerun reads it, skips ids whose latest record
has ``status == "ok"`` and appends the rest. A damaged line (e.g. a file
edited by hand) is skipped, never fatal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aw_lookahead.errors import RunError
from aw_lookahead.trajectory import TurnSample, load_turn_samples

__all__ = [
    "JUDGED_FILE",
    "PREDICTIONS_FILE",
    "TEST_PATTERN",
    "finished_ids",
    "latest_records",
    "load_samples",
    "unique_ids",
]

PREDICTIONS_FILE = "predictions.jsonl"
JUDGED_FILE = "judged.jsonl"


def _iter_records(path: Path) -> Iterator[dict[str, Any]]:
    if not path.exists():
        return
    with path.open(encoding="utf-8") as fh:
        for raw in fh:
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict) and "id" in obj:
                yield obj


def latest_records(path: str | Path) -> dict[str, dict[str, Any]]:
    """The last record of each id in ``path``, in first-seen order (empty if missing)."""
    out: dict[str, dict[str, Any]] = {}
    for rec in _iter_records(Path(path)):
        out[str(rec["id"])] = rec
    return out


def finished_ids(path: str | Path) -> set[str]:
    """Ids whose latest record in ``path`` finished (``status == "ok"``)."""
    return {i for i, rec in latest_records(path).items() if rec.get("status") == "ok"}


def unique_ids(samples: list[TurnSample]) -> list[str]:
    """Stable ids for ``samples``; a repeated id gets ``~2``, ``~3``... in file order."""
    seen: dict[str, int] = {}
    out = []
    for s in samples:
        base = s.sample_id
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}~{seen[base]}")
    return out


TEST_PATTERN = "*_test.jsonl"


def load_samples(
    data: str | Path, *, limit: int | None = None, pattern: str = TEST_PATTERN
) -> list[TurnSample]:
    """Samples from an AgentWorldBench file / folder (or trajectories), records unchanged.

    A folder is read as its ``pattern`` files (``*_test.jsonl``, the benchmark's
    split files, as the reference script reads it).
    """
    samples = []
    for sample in load_turn_samples(data, pattern=pattern):
        samples.append(sample)
        if limit is not None and len(samples) >= limit:
            break
    if not samples:
        raise RunError(f"{data} holds no samples")
    return samples
