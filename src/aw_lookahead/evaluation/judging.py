"""``eval judge``: score a run's predictions with the LLM judge, resumably.

Reads ``predictions.jsonl`` (latest record per id), writes ``judged.jsonl``
in the same folder: each line is the prediction record plus ``judge``
(the five scores, their mean, the 0-100 value, attempts, raw replies, error)
and ``status`` (``ok`` when the judge gave valid scores, ``failed`` when it
did not or when there was no prediction to judge). A rerun skips ids already
judged ``ok``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aw_lookahead.errors import RunError
from aw_lookahead.trajectory import TurnSample

from ._io import JUDGED_FILE, PREDICTIONS_FILE, finished_ids, latest_records
from ._pool import write_concurrently
from .judge import LLMJudge, to_published_scale
from .rules import RuleResult, verify_sample

__all__ = ["JudgeStats", "judge_predictions"]


@dataclass
class JudgeStats:
    """Counts of one ``eval judge`` call."""

    total: int
    skipped: int
    ok: int
    failed: int
    wall_s: float


async def _judge_one(judge: LLMJudge, rec: dict[str, Any]) -> dict[str, Any]:
    out = dict(rec)
    if rec.get("status") != "ok":
        out.update(status="failed", judge={"failed": True, "error": "no prediction to judge"})
        return out
    sample = TurnSample.from_agentworldbench(rec["sample"])
    observation = str(rec.get("observation", ""))
    rule = RuleResult.model_validate(rec["rule"]) if rec.get("rule") else None
    if rule is None:
        rule = verify_sample(sample, observation)
        out["rule"] = rule.model_dump()
    outcome = await judge.score(sample, observation, rule)
    verdict: dict[str, Any] = {
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
    judge: LLMJudge,
    *,
    concurrency: int = 8,
    progress: bool = True,
    resume: bool = True,
) -> JudgeStats:
    """Judge every prediction in ``run_dir``; results go to ``run_dir/judged.jsonl``."""
    run = Path(run_dir)
    preds = latest_records(run / PREDICTIONS_FILE)
    if not preds:
        raise RunError(
            f"{run / PREDICTIONS_FILE} holds no predictions; run `aw-lookahead eval run` first"
        )
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
