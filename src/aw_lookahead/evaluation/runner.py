"""``eval run``: predict every sample's observation concurrently, resumably.

Each sample is sent exactly as the benchmark renders it (the record's own
``system_str`` and verbatim turn messages, see :mod:`aw_lookahead.prompts`).
``concurrency`` requests are in flight at once (a worker pool, so memory stays
flat for large sets). Every reply is appended to ``predictions.jsonl`` as soon
as it arrives, with the raw reply text, the reasoning (kept for inspection,
never shown to the judge), usage, latency and the rule verdict. A rerun skips
ids already finished and retries the ones that failed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aw_lookahead.errors import WorldModelError
from aw_lookahead.trajectory import TurnSample
from aw_lookahead.worldmodel import WorldModel

from ._io import PREDICTIONS_FILE, finished_ids, unique_ids
from ._pool import write_concurrently
from .rules import verify_sample

__all__ = ["RunStats", "predict_samples", "prediction_record"]


@dataclass
class RunStats:
    """What one ``eval run`` did: samples total, skipped (already done), ok, failed."""

    total: int
    skipped: int
    ok: int
    failed: int
    wall_s: float

    @property
    def samples_per_s(self) -> float:
        done = self.ok + self.failed
        return done / self.wall_s if self.wall_s > 0 else 0.0


def prediction_record(
    sample_id: str, sample: TurnSample, result: Any, latency_s: float
) -> dict[str, Any]:
    """The JSON line for one sample: a prediction, or the error that prevented it."""
    rec: dict[str, Any] = {
        "id": sample_id,
        "domain": sample.trajectory.domain.value,
        "turn_idx": sample.turn_idx,
        "sample": sample.to_agentworldbench(),
    }
    if isinstance(result, BaseException):
        rec.update(status="error", error=f"{type(result).__name__}: {result}", latency_s=latency_s)
        raw = getattr(result, "raw", None)
        if isinstance(raw, str):
            rec["raw"] = raw
        return rec
    rule = verify_sample(sample, result.observation)
    rec.update(
        status="ok",
        observation=result.observation,
        raw=result.raw,
        reasoning=result.reasoning,
        model=result.model,
        usage=result.usage.model_dump(),
        latency_s=round(result.latency_s, 4),
        finish_reason=result.finish_reason,
        truncated=result.truncated,
        parse_method=result.parse_method,
        rule=rule.model_dump(),
    )
    return rec


async def predict_samples(
    samples: Sequence[TurnSample],
    world_model: WorldModel,
    out_dir: str | Path,
    *,
    concurrency: int = 8,
    progress: bool = True,
    resume: bool = True,
) -> RunStats:
    """Predict ``samples`` into ``out_dir/predictions.jsonl``; returns the counts.

    World-model failures are recorded as ``status: "error"`` lines (and
    retried by the next run); programming errors propagate.
    """
    out = Path(out_dir) / PREDICTIONS_FILE
    ids = unique_ids(list(samples))
    done = finished_ids(out) if resume else set()
    todo = [(i, s) for i, s in zip(ids, samples, strict=True) if i not in done]
    stats = RunStats(total=len(ids), skipped=len(ids) - len(todo), ok=0, failed=0, wall_s=0.0)

    async def handle(item: tuple[str, TurnSample]) -> dict[str, Any]:
        sample_id, sample = item
        t0 = time.perf_counter()
        result: Any
        try:
            result = await world_model.predict(sample.history, sample.action)
        except WorldModelError as exc:
            result = exc
        return prediction_record(sample_id, sample, result, time.perf_counter() - t0)

    stats.ok, stats.failed, stats.wall_s = await write_concurrently(
        todo,
        handle,
        path=out,
        append=resume,
        label="predict",
        concurrency=concurrency,
        progress=progress,
    )
    return stats
