"""``eval judge``: score a run's predictions with an LLM judge, resumably.

Reads ``predictions.jsonl`` (latest record per id; ours or the reference
script's), writes ``judged.jsonl`` in the same folder: each line is the
prediction record plus ``judge`` (``kind``: ``rubric`` for our judge,
``reference`` for :class:`~.judges.reference.ReferenceJudge`; the five scores,
their mean, the 0-100 value, attempts, raw replies, error) and ``status``
(``ok`` when the judge gave valid scores, ``failed`` when it did not or when
there was no prediction to judge: a failed request, or an empty reply, which
the reference counts as "No model generation"). A rerun skips ids already
judged ``ok``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aw_lookahead.agentworldbench import record_to_sample
from aw_lookahead.errors import RunError

from ._pool import write_concurrently
from .interop import usable_records
from .judges.reference import ReferenceJudge
from .judges.rubric import RubricJudge, to_published_scale
from .records import JUDGED_FILE, PREDICTIONS_FILE, finished_ids
from .rules.verifier import RuleResult, verify_sample

__all__ = ["JudgeStats", "judge_predictions"]


@dataclass
class JudgeStats:
    """Counts of one ``eval judge`` call."""

    total: int
    skipped: int
    ok: int
    failed: int
    wall_s: float


async def _judge_one(judge: RubricJudge | ReferenceJudge, rec: dict[str, Any]) -> dict[str, Any]:
    out = dict(rec)
    kind = "reference" if isinstance(judge, ReferenceJudge) else "rubric"
    if rec.get("status") != "ok" or rec.get("observation") is None:
        error = "no prediction to judge" if rec.get("status") != "ok" else "No model generation"
        out.update(status="failed", judge={"kind": kind, "failed": True, "error": error})
        return out
    sample = record_to_sample(rec["sample"])
    observation = str(rec.get("observation", ""))
    rule = RuleResult.model_validate(rec["rule"]) if rec.get("rule") else None
    if rule is None:
        rule = verify_sample(sample, observation)
        out["rule"] = rule.model_dump()
    if isinstance(judge, ReferenceJudge):
        verdict = await judge.verdict(rec["sample"], str(rec.get("extracted_output", observation)))
        if not verdict["failed"]:
            verdict["total_100"] = round(to_published_scale(verdict["total"]), 4)
        out.update(status="failed" if verdict["failed"] else "ok", judge=verdict)
        return out
    outcome = await judge.score(sample, observation, rule)
    verdict = {
        "kind": kind,
        "failed": outcome.failed,
        "attempts": outcome.attempts,
        "raw": outcome.raw,
        "error": outcome.error,
        "model": judge.model,
    }
    if outcome.scores is not None:
        verdict.update(outcome.scores.model_dump())
        verdict["total"] = outcome.scores.total
        verdict["total_100"] = round(to_published_scale(outcome.scores.total), 4)
    out.update(status="failed" if outcome.failed else "ok", judge=verdict)
    return out


async def judge_predictions(
    run_dir: str | Path,
    judge: RubricJudge | ReferenceJudge,
    *,
    concurrency: int = 8,
    progress: bool = True,
    resume: bool = True,
) -> JudgeStats:
    """Judge every prediction in ``run_dir``; results go to ``run_dir/judged.jsonl``."""
    run = Path(run_dir)
    if not (run / PREDICTIONS_FILE).exists():
        raise RunError(
            f"{run / PREDICTIONS_FILE} does not exist; run `aw-lookahead eval run` first"
        )
    preds = usable_records(run / PREDICTIONS_FILE)
    done = finished_ids(run / JUDGED_FILE) if resume else set()
    todo = [rec for i, rec in preds.items() if i not in done]
    stats = JudgeStats(len(preds), len(preds) - len(todo), 0, 0, 0.0)

    async def handle(rec: dict[str, Any]) -> dict[str, Any]:
        return await _judge_one(judge, rec)

    stats.ok, stats.failed, stats.wall_s = await write_concurrently(
        todo,
        handle,
        path=run / JUDGED_FILE,
        append=resume,
        label="judge",
        concurrency=concurrency,
        progress=progress,
    )
    return stats
