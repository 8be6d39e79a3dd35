"""Result files moving both ways between our evaluator and the reference AgentWorldBench script.

The reference script writes each benchmark record back with fields added:
``infer`` adds ``gen`` (the raw reply, ``""`` when the request failed);
``judge`` adds ``total_score``, ``format`` ... ``quality``, ``failed`` (0.0 or
1.0), ``strengths``, ``weaknesses``, ``extracted_output``,
``judge_raw_output`` and ``error_message``. Its ``score`` step groups by the
part of ``task`` after the last ``/`` and averages ``failed == 0`` records.

* :func:`usable_records` reads our ``predictions.jsonl`` / ``judged.jsonl``
  *or* the reference's, turning reference records into ours
  (``protocol: "official"``, ``source: "reference"``); a file from which no
  record can be used is an error.
* :func:`export_reference` writes a run of ours in the reference layout, so
  its ``score`` step reads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aw_lookahead.agentworldbench import record_to_sample
from aw_lookahead.errors import RunError, TrajectoryError, UsageError
from aw_lookahead.trajectory import JsonlWriter

from .judges.rubric import DIMENSIONS, to_published_scale
from .official import clean_marker, extract_observation
from .records import JUDGED_FILE, PREDICTIONS_FILE, latest_records
from .rules.verifier import verify_sample

__all__ = ["REFERENCE_OUTPUT_FIELDS", "export_reference", "from_reference", "usable_records"]

REFERENCE_OUTPUT_FIELDS = (
    "gen",
    "total_score",
    *DIMENSIONS,
    "failed",
    "strengths",
    "weaknesses",
    "extracted_output",
    "judge_raw_output",
    "error_message",
)


def is_reference_record(obj: dict[str, Any]) -> bool:
    """True for a line written by the reference script (benchmark fields + its outputs)."""
    return "status" not in obj and "prompt" in obj and any(k in obj for k in ("gen", "failed"))


def from_reference(obj: dict[str, Any]) -> dict[str, Any] | None:
    """One reference-script record as ours; ``None`` when its benchmark part is unusable."""
    sample_rec = {k: v for k, v in obj.items() if k not in REFERENCE_OUTPUT_FIELDS}
    try:
        sample = record_to_sample(sample_rec)
    except (TrajectoryError, ValueError):
        return None
    gen = obj.get("gen") if isinstance(obj.get("gen"), str) else ""
    rec: dict[str, Any] = {
        "id": sample.sample_id,
        "domain": sample.trajectory.domain.value,
        "turn_idx": sample.turn_idx,
        "protocol": "official",
        "source": "reference",
        "sample": sample_rec,
        "status": "ok",
        "gen": gen,
    }
    if gen:
        extracted = obj.get("extracted_output")
        extracted = extracted if isinstance(extracted, str) else extract_observation(gen)
        observation = clean_marker(extracted)
        rec.update(
            extracted_output=extracted,
            observation=observation,
            rule=verify_sample(sample, observation).model_dump(),
        )
    else:
        rec.update(observation=None, failure="empty_reply")
    if "failed" in obj or "total_score" in obj:
        failed = obj.get("failed", 1.0) != 0.0
        verdict: dict[str, Any] = {
            "kind": "reference",
            "model": obj.get("judge_model"),
            "failed": failed,
            "raw": [obj["judge_raw_output"]]
            if isinstance(obj.get("judge_raw_output"), str)
            else [],
            "error": obj.get("error_message"),
        }
        if not failed:
            scores = {d: obj.get(d, 0) for d in DIMENSIONS}
            total = obj.get("total_score", 0)
            verdict.update(
                scores,
                total=total,
                total_100=round(to_published_scale(total), 4),
                strengths=obj.get("strengths", []),
                weaknesses=obj.get("weaknesses", []),
            )
        rec.update(status="failed" if failed else "ok", judge=verdict)
    return rec


def convert_record(rec: dict[str, Any]) -> dict[str, Any] | None:
    """``rec`` as our record: ours unchanged, the reference's converted, anything else None."""
    if is_reference_record(rec):
        return from_reference(rec)
    return rec if "status" in rec else None


def convert_records(latest: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Keep our records and the reference's (converted to ours); drop everything else."""
    out: dict[str, dict[str, Any]] = {}
    for rid, rec in latest.items():
        converted = convert_record(rec)
        if converted is not None:
            out[rid if converted is rec else str(converted["id"])] = converted
    return out


def usable_records(path: str | Path) -> dict[str, dict[str, Any]]:
    """The latest record per id of ``path`` (ours or the reference's), reference ones converted.

    Raises :class:`~aw_lookahead.errors.UsageError` when the file is missing or
    holds no record we can use (wrong kind of file, every record broken).
    """
    p = Path(path)
    if not p.exists():
        raise UsageError(
            f"{p} is missing; run `aw-lookahead eval run --out {p.parent}` first (or point "
            "--out at the folder that holds it)"
        )
    out = convert_records(latest_records(p))
    if not out:
        raise UsageError(
            f"{p} holds no usable record; expected the predictions.jsonl / judged.jsonl of "
            "`aw-lookahead eval run/judge` or of the reference script (benchmark records "
            "with 'gen', and 'failed'/'total_score' once judged)"
        )
    return out


def _reference_line(rec: dict[str, Any], judged: bool) -> dict[str, Any]:
    line = dict(rec["sample"])
    gen = rec["gen"] if "gen" in rec else rec.get("raw")
    line["gen"] = gen if isinstance(gen, str) else ""
    if not judged:
        return line
    verdict: dict[str, Any] = rec["judge"] if isinstance(rec.get("judge"), dict) else {}
    extracted = rec.get("extracted_output", rec.get("observation")) or ""
    if not line["gen"]:  # the reference skips the judge: no scores at all
        line.update(failed=1.0, error_message="No model generation")
        return line
    if not verdict or verdict.get("failed", True) or "total" not in verdict:
        line.update(
            total_score=0,
            failed=1.0,
            error_message=verdict.get("error") or "Judge scoring failed",
            extracted_output=extracted,
        )
        return line
    raw = verdict.get("raw") or [""]
    line.update(
        total_score=verdict["total"],
        **{d: verdict.get(d, 0) for d in DIMENSIONS},
        failed=0.0,
        strengths=verdict.get("strengths", []),
        weaknesses=verdict.get("weaknesses", []),
        extracted_output=extracted,
        judge_raw_output=raw[-1],
    )
    return line


def export_reference(run_dir: str | Path, to_dir: str | Path) -> dict[str, Path]:
    """Write ``predictions.jsonl`` (and ``judged.jsonl`` when judged) in the reference layout."""
    run, out = Path(run_dir), Path(to_dir)
    if out.resolve() == run.resolve():
        raise RunError("export into a different folder than the run (the file names are the same)")
    out.mkdir(parents=True, exist_ok=True)
    preds = usable_records(run / PREDICTIONS_FILE)
    paths = {"predictions": out / PREDICTIONS_FILE}
    with JsonlWriter(paths["predictions"], append=False) as writer:
        for rec in preds.values():
            writer.write(_reference_line(rec, judged=False))
    if (run / JUDGED_FILE).exists():
        paths["judged"] = out / JUDGED_FILE
        with JsonlWriter(paths["judged"], append=False) as writer:
            for rec in usable_records(run / JUDGED_FILE).values():
                writer.write(_reference_line(rec, judged=True))
    return paths
