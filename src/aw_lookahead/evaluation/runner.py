"""``eval run``: predict every sample's observation concurrently, resumably.

Two protocols, named in every record (``protocol``):

* ``official`` (:mod:`.official`, via :class:`~.official.OfficialModel`): the
  record's messages byte for byte and the reference script's request body,
  parser and failure rules. The raw reply is kept as ``gen`` (the reference's
  field); ``observation`` is what the reference judge would see. A failed
  request is ``status: "error"`` with ``failure`` (``context_too_long``,
  ``timeout``, ...); an empty reply is final (``status: "ok"``, ``gen: ""``,
  ``observation: null``) and counts as a failed sample, as in the reference.
* ``ours`` (any :class:`~aw_lookahead.worldmodel.WorldModel`): our renderer,
  history trimming (``trimmed_turns``), parser and sampling.

``concurrency`` requests are in flight at once (a worker pool, so memory stays
flat for large sets). Every reply is appended to ``predictions.jsonl`` as soon
as it arrives, with the raw reply text, the reasoning (kept for inspection,
never shown to the judge), usage, latency and the rule verdict. A rerun skips
ids already finished and retries the ones that failed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aw_lookahead.agentworldbench import sample_to_record
from aw_lookahead.errors import UsageError, WorldModelError
from aw_lookahead.trajectory import TurnSample
from aw_lookahead.worldmodel import WorldModel
from aw_lookahead.worldmodel.conform import conform

from ._pool import write_concurrently
from .official import OfficialModel, OfficialReply, clean_marker, extract_observation, failure_kind
from .records import PREDICTIONS_FILE, RecordScan, scan_records, unique_ids
from .rules.verifier import verify_sample

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
        "protocol": "official" if isinstance(result, OfficialReply) else "ours",
        "sample": sample_to_record(sample),
    }
    if isinstance(result, BaseException):
        rec.update(status="error", error=f"{type(result).__name__}: {result}", latency_s=latency_s)
        raw = getattr(result, "raw", None)
        if isinstance(raw, str):
            rec["raw"] = raw
        return rec
    if isinstance(result, OfficialReply):
        return _official_record(rec, sample, result)
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
        trimmed_turns=result.trimmed_turns,
        rule=rule.model_dump(),
    )
    return rec


def _official_record(
    rec: dict[str, Any], sample: TurnSample, reply: OfficialReply
) -> dict[str, Any]:
    rec.update(
        status="ok",
        gen=reply.content,
        reasoning=reply.reasoning,
        model=reply.model,
        usage=reply.usage,
        latency_s=round(reply.latency_s, 4),
        finish_reason=reply.finish_reason,
    )
    if not reply.content:
        rec.update(observation=None, failure="empty_reply")
        return rec
    extracted = extract_observation(reply.content)
    observation = clean_marker(extracted)
    rec.update(
        extracted_output=extracted,
        observation=observation,
        rule=verify_sample(sample, observation).model_dump(),
    )
    return rec


_FIX = "choose a new --out folder, pass --no-resume to replace it, or --append to add to it anyway"


def _foreign_record(
    rec: dict[str, Any], rid: str, samples: Mapping[str, TurnSample] | None, protocol: str
) -> str | None:
    """Why ``rec`` (latest record of ``rid``) belongs to another run, or None."""
    if "status" not in rec or not isinstance(rec.get("sample"), dict):
        return "holds a record that `eval run` did not write (not ours)"
    if samples is not None:
        sample = samples.get(rid)
        if sample is None:
            return f"holds a prediction for id {rid!r}, which --data does not have (other inputs)"
        if (rec.get("domain"), rec.get("turn_idx")) != (
            sample.trajectory.domain.value,
            sample.turn_idx,
        ):
            return f"holds another sample under id {rid!r} (other inputs)"
    other = rec.get("protocol")
    if other not in (None, protocol):
        return f"holds predictions of the {other!r} protocol, this run is {protocol!r}"
    return None


def refuse_foreign_run(
    path: Path,
    scan: RecordScan,
    *,
    protocol: str,
    model: str | None,
    samples: Mapping[str, TurnSample] | None = None,
) -> None:
    """A one-line UsageError when resuming into ``path`` (read as ``scan``) would mix this run
    with another one.

    Another run is a file that holds no prediction record at all, a record not
    written by ``eval run``, a prediction for an id that ``samples`` (this run's,
    by id) lacks or for another sample under the same id, a record of another
    protocol, or a finished record of another served model (``model`` None: not
    checked): appending would leave a file whose scores mean nothing. The
    message names the line and says how to proceed (``--append`` adds anyway).
    """
    if not path.is_file() or path.stat().st_size == 0:
        return
    if not scan.latest:
        raise UsageError(f"{path} holds no prediction record (not an `eval run` file): {_FIX}")
    for rid, rec in scan.latest.items():
        why = _foreign_record(rec, rid, samples, protocol)
        other_model = rec.get("model")
        ok = rec.get("status") == "ok"
        if why is None and model is not None and ok and other_model not in (None, model):
            why = f"holds predictions of model {other_model!r}, this run uses {model!r}"
        if why is not None:
            raise UsageError(f"{path}:{scan.lines.get(rid, '?')} {why}: {_FIX}")


async def predict_samples(
    samples: Sequence[TurnSample],
    world_model: WorldModel | OfficialModel,
    out_dir: str | Path,
    *,
    concurrency: int = 8,
    progress: bool = True,
    resume: bool = True,
    append: bool = False,
    inputs: Mapping[str, TurnSample] | None = None,
) -> RunStats:
    """Predict ``samples`` into ``out_dir/predictions.jsonl``; returns the counts.

    An :class:`~.official.OfficialModel` runs the ``official`` protocol, any
    other world model ours. World-model failures are recorded as
    ``status: "error"`` lines (and retried by the next run); programming
    errors propagate. Resuming into another run's file is refused (see
    :func:`refuse_foreign_run`) unless ``append`` is set; ``inputs`` is the
    whole data set by id when ``samples`` is a part of it (``--limit``), so an
    earlier, longer run of the same data is not taken for another run's.
    """
    out = Path(out_dir) / PREDICTIONS_FILE
    ids = unique_ids(list(samples))
    done: set[str] = set()
    if resume:
        scan = scan_records(out)  # one read: the foreign-run check and the finished ids
        protocol = "official" if isinstance(world_model, OfficialModel) else "ours"
        named = world_model if isinstance(world_model, OfficialModel) else conform(world_model)
        model = await named.resolve_model()
        if not append:
            known = inputs if inputs is not None else dict(zip(ids, samples, strict=True))
            refuse_foreign_run(out, scan, protocol=protocol, model=model, samples=known)
        done = scan.finished_ids()
    todo = [(i, s) for i, s in zip(ids, samples, strict=True) if i not in done]
    stats = RunStats(total=len(ids), skipped=len(ids) - len(todo), ok=0, failed=0, wall_s=0.0)

    async def handle(item: tuple[str, TurnSample]) -> dict[str, Any]:
        sample_id, sample = item
        t0 = time.perf_counter()
        result: Any
        try:
            if isinstance(world_model, OfficialModel):
                result = await world_model.complete(world_model.messages(sample))
            else:
                result = await world_model.predict(sample.history, sample.action)
        except WorldModelError as exc:
            result = exc
        rec = prediction_record(sample_id, sample, result, time.perf_counter() - t0)
        if isinstance(world_model, OfficialModel) and isinstance(result, WorldModelError):
            rec.update(protocol="official", failure=failure_kind(result))
        return rec

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
