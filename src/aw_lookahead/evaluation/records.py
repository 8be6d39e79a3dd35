"""Result files of an evaluation run: append-only JSONL, latest record per id wins.

``predictions.jsonl`` (``eval run``) and ``judged.jsonl`` (``eval judge``)
hold one JSON object per line with at least ``id`` and ``status``. Lines are
written whole (:class:`~aw_lookahead.trajectory.JsonlWriter`), so a run killed
mid-way leaves a valid file; a rerun reads it, skips ids whose latest record
has ``status == "ok"`` and appends the rest. A damaged line (e.g. a file
edited by hand, invalid UTF-8, a record without ``id``) is skipped, never
fatal; :func:`scan_records` says which lines were skipped so reports can
show it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aw_lookahead._jsonl import input_lines, open_input
from aw_lookahead.agentworldbench import load_turn_samples
from aw_lookahead.errors import RunError, TrajectoryError
from aw_lookahead.trajectory import TurnSample, decode_jsonl_line

__all__ = [
    "JUDGED_FILE",
    "PREDICTIONS_FILE",
    "TEST_PATTERN",
    "RecordScan",
    "finished_ids",
    "latest_records",
    "load_samples",
    "scan_records",
    "unique_ids",
]

PREDICTIONS_FILE = "predictions.jsonl"
JUDGED_FILE = "judged.jsonl"


@dataclass
class RecordScan:
    """What :func:`scan_records` read: the latest record per id and the lines it skipped."""

    latest: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped_lines: list[int] = field(default_factory=list)
    """1-based numbers of the lines that held no usable record."""
    lines: dict[str, int] = field(default_factory=dict)
    """The 1-based line of each id's latest record (for messages that name it)."""

    def finished_ids(self) -> set[str]:
        """Ids whose latest record finished (``status == "ok"``)."""
        return {i for i, rec in self.latest.items() if rec.get("status") == "ok"}


def scan_records(path: str | Path) -> RecordScan:
    """Read ``path`` (missing: empty); keep the last record per id, note the lines skipped."""
    p = Path(path)
    scan = RecordScan()
    if not p.exists():
        return scan
    with open_input(p, what="records file") as fh:
        for lineno, raw in enumerate(input_lines(fh, p, what="records file"), start=1):
            if not raw.strip():
                continue
            try:
                obj = decode_jsonl_line(raw, source=str(p), line=lineno)
            except TrajectoryError:
                obj = None
            if isinstance(obj, dict) and "id" in obj:
                scan.latest[str(obj["id"])] = obj
                scan.lines[str(obj["id"])] = lineno
            else:
                scan.skipped_lines.append(lineno)
    return scan


def latest_records(path: str | Path) -> dict[str, dict[str, Any]]:
    """The last record of each id in ``path``, in first-seen order (empty if missing)."""
    return scan_records(path).latest


def finished_ids(path: str | Path) -> set[str]:
    """Ids whose latest record in ``path`` finished (``status == "ok"``)."""
    return scan_records(path).finished_ids()


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
