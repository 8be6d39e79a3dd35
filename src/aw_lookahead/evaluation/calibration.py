"""Calibrating a world model for the gate: ``p_failure`` on actions with known outcomes.

``aw-lookahead eval calibrate`` runs the engine (:class:`~aw_lookahead.lookahead.Lookahead`,
the same ``p_failure`` the gate computes) on held-out actions whose real
outcome is known, and fits the veto threshold for a false-veto budget
(:func:`~aw_lookahead.lookahead.calibration.fit_threshold`), over all actions and
for each domain with enough of them on its own.

Samples: every turn of the given trajectories (our JSONL schema, e.g. a
``validation.jsonl`` split) is one action: the history is the turns before
it, the truth is whether the judges read its *real* observation as a veto
outcome (failure or no-op: the failure the gate can see in text). Actions an
action-level judge calls destructive are left out: the fail-safe rule, not
the threshold, decides those. ``limit`` keeps an even, seeded spread.

Guarantees: every sample is checked with one engine per run, without a
prediction cache; a sample the world model could not check is counted
(``skipped``) and left out of the fit, never read as a pass; the file says
the sampling it was fit with, and the engine applies it only to that.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aw_lookahead.errors import RunError
from aw_lookahead.lookahead import Lookahead, Outcome, RiskRouter, RuleJudge
from aw_lookahead.lookahead.calibration import (
    Calibration,
    fit_domains,
    fit_group,
    fit_summary,
    reliability_bins,
)
from aw_lookahead.lookahead.judges import Judge, combine_verdicts
from aw_lookahead.lookahead.safety import action_hazard
from aw_lookahead.trajectory import Action, Trajectory, read_trajectories
from aw_lookahead.worldmodel.base import Prediction, WorldModel

__all__ = [
    "CalibrationSample",
    "calibrate",
    "failed_for_real",
    "load_calibration_samples",
    "write_calibration",
]

_FAILED = frozenset({Outcome.FAILURE, Outcome.NO_OP})


@dataclass(frozen=True)
class CalibrationSample:
    """One action with a known outcome: its history, the action, the real observation."""

    id: str
    history: Trajectory
    action: Action
    observation: str


def load_calibration_samples(
    paths: Sequence[str | Path], *, limit: int | None = None, seed: int = 0
) -> tuple[list[CalibrationSample], int]:
    """Every non-destructive turn of the trajectories in ``paths``, and how many were left out.

    With ``limit`` a seeded random spread of that many (the same for the same
    files and seed).
    """
    router = RiskRouter()
    samples: list[CalibrationSample] = []
    destructive = 0
    for path in paths:
        for traj in read_trajectories(path):
            for i, turn in enumerate(traj.turns):
                history = traj.prefix(i)
                if action_hazard(router, history, turn.action) is not None:
                    destructive += 1
                    continue
                samples.append(
                    CalibrationSample(
                        f"{traj.id or 'trajectory'}#{i + 1}", history, turn.action, turn.observation
                    )
                )
    if limit is not None and limit < len(samples):
        samples = random.Random(seed).sample(samples, limit)
    return samples, destructive


async def failed_for_real(judges: Sequence[Judge], sample: CalibrationSample) -> bool:
    """Whether ``judges`` read the sample's *real* observation as a veto outcome (failure
    or no-op): the truth a gate decision on it is scored against."""
    real = Prediction(action=sample.action, observation=sample.observation)
    verdicts = [
        await j.judge(sample.history, sample.action, real, task=sample.history.task) for j in judges
    ]
    return combine_verdicts(verdicts).outcome in _FAILED


async def calibrate(
    world_model: WorldModel,
    samples: Sequence[CalibrationSample],
    *,
    budget: float,
    model: str,
    judges: Sequence[Judge] | None = None,
    concurrency: int = 4,
    data: Sequence[str] = (),
    destructive: int = 0,
    command: str = "",
    adapter_sha256: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    max_unchecked: float = 0.1,
) -> tuple[Calibration, list[dict[str, Any]]]:
    """Check every sample with the engine, fit the threshold; the file and one row per sample.

    More than ``max_unchecked`` of the samples unchecked (server down, timeouts) is a
    :class:`~aw_lookahead.errors.RunError`: a fit on the rest would not hold.
    """
    judges = list(judges) if judges is not None else [RuleJudge()]
    engine = Lookahead(world_model, judges=judges, cache=False, threshold=1.0)
    gate = asyncio.Semaphore(concurrency)
    rows: list[dict[str, Any] | None] = [None] * len(samples)
    done = 0

    async def one(i: int, sample: CalibrationSample) -> None:
        nonlocal done
        async with gate:
            (decision,) = await engine.gate(sample.history, [sample.action])
        failed = await failed_for_real(judges, sample)
        read_only = engine.router.route(sample.history, sample.action).read_only
        rows[i] = {
            "id": sample.id,
            "domain": sample.history.domain.value,
            "group": fit_group(sample.history.domain.value, read_only),
            "failed": failed,
            "p_failure": decision.p_failure,
            "predictions": decision.predictions,
            "outcome": decision.outcome.value,
            "kind": decision.kind.value,
            "error": decision.error,
        }
        done += 1
        if progress is not None:
            progress(done, len(samples))

    await asyncio.gather(*(one(i, s) for i, s in enumerate(samples)))
    kept = [r for r in rows if r is not None and r["p_failure"] is not None]
    skipped = len(samples) - len(kept)
    if skipped > len(samples) * max_unchecked:
        first = next((r["error"] for r in rows if r is not None and r["error"]), "unknown")
        raise RunError(
            f"{skipped} of {len(samples)} actions could not be checked (first: {first}); "
            "a calibration from the rest would not hold: fix the server and run again"
        )
    scores = [float(r["p_failure"]) for r in kept]
    failed = [bool(r["failed"]) for r in kept]
    overall = fit_summary(scores, failed, budget)
    per_action = max((int(r["predictions"]) for r in kept), default=1)
    settings = engine.world_model.sampling_settings()
    estimator = (
        "samples" if per_action > 1 else "logprobs" if settings.get("logprobs") else "single"
    )
    calibration = Calibration(
        model=model,
        adapter_sha256=adapter_sha256,
        threshold=overall.threshold,
        budget=budget,
        catch_rate=overall.catch_rate,
        false_veto_rate=overall.false_veto_rate,
        predictions_per_action=per_action,
        estimator=estimator,
        temperature=settings.get("temperature"),
        sampling=settings,
        failing=overall.failing,
        good=overall.good,
        skipped=skipped,
        destructive=destructive,
        curve=overall.curve,
        domains={
            **fit_domains(scores, failed, [str(r["domain"]) for r in kept], budget),
            **fit_domains(scores, failed, [str(r["group"]) for r in kept], budget),
        },
        reliability=reliability_bins(scores, failed),
        data=list(data),
        created=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        command=command,
    )
    return calibration, [r for r in rows if r is not None]


def write_calibration(
    calibration: Calibration, path: str | Path, rows: Sequence[dict[str, Any]] = ()
) -> dict[str, Path]:
    """Write the file, a reliability diagram PNG beside it (with matplotlib) and the rows."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(calibration.model_dump_json(indent=2) + "\n", encoding="utf-8")
    written = {"calibration": out}
    if rows:
        rows_path = out.with_suffix(".samples.jsonl")
        rows_path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
        written["samples"] = rows_path
    png = out.with_suffix(".png")
    if _plot(calibration, png):
        written["diagram"] = png
    return written


def _plot(calibration: Calibration, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    bins = calibration.reliability
    left.plot([0, 1], [0, 1], linestyle=":", color="grey", label="perfectly calibrated")
    left.bar(
        [(b.low + b.high) / 2 for b in bins],
        [b.failure_rate for b in bins],
        width=[(b.high - b.low) * 0.9 for b in bins],
        alpha=0.6,
        label="observed failure rate",
    )
    left.plot([b.mean_p_failure for b in bins], [b.failure_rate for b in bins], "o-", label="bins")
    for b in bins:
        left.annotate(
            str(b.count), ((b.low + b.high) / 2, b.failure_rate), ha="center", va="bottom"
        )
    left.set(xlim=(0, 1), ylim=(0, 1), xlabel="p_failure", ylabel="actions that failed")
    left.set_title(f"reliability: {calibration.model}")
    left.legend(loc="upper left", fontsize="small")
    curve = calibration.curve
    right.plot([p.false_veto_rate for p in curve], [p.catch_rate for p in curve], "o-")
    for p in curve:
        if p.threshold == calibration.threshold:
            right.annotate(f"threshold {p.threshold:.2f}", (p.false_veto_rate, p.catch_rate))
    right.axvline(calibration.budget, linestyle=":", color="red", label="false-veto budget")
    right.set(xlim=(0, 1), ylim=(0, 1), xlabel="false-veto rate", ylabel="catch rate")
    chosen = "none" if calibration.threshold is None else f"{calibration.threshold:.2f}"
    right.set_title(f"threshold {chosen} for budget {calibration.budget:g}")
    right.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True
