"""Family-level train/validation/test splits and the on-disk dataset layout."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from aw_lookahead.trajectory import Trajectory, write_trajectories

SPLITS: tuple[str, ...] = ("train", "validation", "test")
"""The split names; each becomes ``<split>.jsonl`` in the output folder."""


def split_families(
    families: Sequence[str], *, seed: int, validation: float = 0.1, test: float = 0.2
) -> dict[str, str]:
    """Assign each family to one split, deterministically for a given seed.

    Families are ordered by a seeded hash (not by name), then the first
    ``test`` share goes to ``test``, the next ``validation`` share to
    ``validation`` and the rest to ``train``; each non-empty share gets at
    least one family when there are three or more families.
    """
    unique = sorted(set(families))
    order = sorted(unique, key=lambda f: hashlib.sha256(f"{seed}:{f}".encode()).hexdigest())
    n = len(order)
    n_test = max(1, round(n * test)) if n >= 3 and test > 0 else 0
    n_val = max(1, round(n * validation)) if n >= 3 and validation > 0 else 0
    out: dict[str, str] = {}
    for i, family in enumerate(order):
        out[family] = "test" if i < n_test else "validation" if i < n_test + n_val else "train"
    return out


class DatasetManifest(BaseModel):
    """What a generated dataset folder holds (``manifest.json``)."""

    domain: str
    generator: str
    seed: int
    splits: dict[str, list[str]] = Field(description="split -> template families in it")
    counts: dict[str, int] = Field(description="split -> trajectories written")
    turns: dict[str, int] = Field(description="split -> turns written")
    extra: dict[str, object] = Field(default_factory=dict)


def write_split(
    out_dir: str | Path,
    trajectories: Iterable[Trajectory],
    assignment: dict[str, str],
    *,
    domain: str,
    generator: str,
    seed: int,
    family_key: str = "family",
    extra: dict[str, object] | None = None,
) -> DatasetManifest:
    """Write ``train/validation/test.jsonl`` and ``manifest.json`` into ``out_dir``.

    Each trajectory's family is read from ``metadata[family_key]``; its split
    comes from ``assignment``. Files are replaced, never appended to.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    buckets: dict[str, list[Trajectory]] = {s: [] for s in SPLITS}
    for traj in trajectories:
        family = str(traj.metadata.get(family_key, ""))
        buckets[assignment[family]].append(traj)
    turns: Counter[str] = Counter()
    for split, items in buckets.items():
        write_trajectories(out / f"{split}.jsonl", items, append=False)
        turns[split] = sum(len(t.turns) for t in items)
    manifest = DatasetManifest(
        domain=domain,
        generator=generator,
        seed=seed,
        splits={s: sorted(f for f, v in assignment.items() if v == s) for s in SPLITS},
        counts={s: len(items) for s, items in buckets.items()},
        turns=dict(turns),
        extra=extra or {},
    )
    (out / "manifest.json").write_text(
        json.dumps(manifest.model_dump(), indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    return manifest
