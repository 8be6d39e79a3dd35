"""From a simulated action to a :class:`Decision`: the per-action slot, scoring, and stats.

The engine (:mod:`.engine`) schedules the world-model and judge calls of a
step; this module holds what it fills in for each action (:class:`Slot`), the
counters it keeps (:class:`EngineStats`), and the pure mapping from a filled
slot to a :class:`Decision` with its :func:`heuristic_score`. Kept apart so
the scheduling and the decision rules can be read (and tested) separately;
:mod:`.engine` re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any

from aw_lookahead.trajectory import Action
from aw_lookahead.worldmodel.base import Prediction

from .routing import Route
from .safety import ErrorPolicy
from .types import Decision, DecisionKind, Outcome, Signal, Verdict

__all__ = ["EngineStats", "ErrorPolicy", "Slot", "decide", "heuristic_score"]

_BASE_SCORE = {
    Outcome.SUCCESS: 0.75,
    Outcome.UNKNOWN: 0.5,
    Outcome.NO_OP: 0.1,
    Outcome.FAILURE: 0.0,
    Outcome.RISKY: 0.0,
}


def heuristic_score(verdict: Verdict) -> float:
    """The verdict's progress if given, else the deterministic heuristic (see :mod:`.engine`)."""
    if verdict.progress is not None:
        return verdict.progress
    score = _BASE_SCORE[verdict.outcome]
    for s in verdict.signals:
        score += 0.05 if s.outcome is Outcome.SUCCESS else -0.05
    return min(1.0, max(0.0, score))


@dataclass
class EngineStats:
    """Counters since the engine was made: what routing and the cache saved, what went unchecked.

    ``errors`` counts actions without a verdict; of those (and of actions
    routed past simulation by ``simulate="never"``) ``unchecked`` ran
    without a check and ``blocked_unchecked`` were vetoed by ``on_error``;
    ``causes`` counts them by cause (``unreachable``, ``deadline``,
    ``context``, ...).
    """

    actions: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    skipped: int = 0
    errors: int = 0
    unchecked: int = 0
    blocked_unchecked: int = 0
    causes: dict[str, int] = field(default_factory=dict)


@dataclass
class Slot:
    """One action to simulate in a step, and what became of it.

    ``error`` is the failure as text; ``exception`` the exception behind it,
    when there was one (a world model's typed error, a judge's, a deadline).
    """

    action: Action
    index: int
    route: Route | None = None
    key: str | None = None
    prediction: Prediction | None = None
    cached: bool = False
    error: str | None = None
    exception: BaseException | None = None
    verdict: Verdict | None = None
    judge_s: float = 0.0


def decide(slot: Slot, *, veto_outcomes: Set[Outcome]) -> Decision:
    """The decision for a filled slot.

    Without a verdict the decision is ``unsimulated`` with the error; the
    engine then applies its ``on_error`` policy (:mod:`.safety`).
    """
    pred = slot.prediction
    meta: dict[str, Any] = {"route": slot.route.model_dump()} if slot.route else {}
    tokens = pred.usage.total_tokens if pred is not None and not slot.cached else 0
    latency = (pred.latency_s if pred is not None and not slot.cached else 0.0) + slot.judge_s
    if slot.verdict is None:
        error = slot.error or "no verdict"
        signal = Signal(
            source="engine",
            name="engine.judge_error" if pred is not None else "engine.world_model_error",
            outcome=Outcome.UNKNOWN,
            detail=error,
        )
        return Decision(
            action=slot.action,
            kind=DecisionKind.UNSIMULATED,
            reason=f"the {'judges' if pred is not None else 'world model'} failed: {error}",
            signals=[signal],
            prediction=pred,
            latency_s=latency,
            tokens=tokens,
            cached=slot.cached,
            error=error,
            error_type=type(slot.exception).__name__ if slot.exception is not None else None,
            exception=slot.exception,
            index=slot.index,
            metadata=meta,
        )
    verdict = slot.verdict
    veto = verdict.outcome in veto_outcomes
    reason = verdict.reason or f"predicted {verdict.outcome.value}"
    return Decision(
        action=slot.action,
        kind=DecisionKind.VETO if veto else DecisionKind.EXECUTE,
        outcome=verdict.outcome,
        reason=reason,
        signals=verdict.signals,
        prediction=pred,
        score=heuristic_score(verdict),
        progress=verdict.progress,
        latency_s=latency,
        tokens=tokens + verdict.tokens,
        cached=slot.cached,
        index=slot.index,
        metadata=meta,
    )
