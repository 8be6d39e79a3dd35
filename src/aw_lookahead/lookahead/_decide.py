"""From a simulated action to a :class:`Decision`: the step's values, scoring, and stats.

The engine (:mod:`.engine`) schedules a step's world-model and judge calls
(:mod:`._simulate`); each returns a value (:class:`Simulated`, :class:`Judged`)
and this module maps a :class:`Candidate` with those values to a
:class:`Decision` (:func:`decide`, with its :func:`heuristic_score`), a pure
function. It also holds the counters the engine keeps (:class:`EngineStats`).
Kept apart so the scheduling and the decision rules can be read (and tested)
separately; :mod:`.engine` re-exports the public names.
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

__all__ = [
    "Candidate",
    "EngineStats",
    "ErrorPolicy",
    "Failure",
    "Judged",
    "Simulated",
    "decide",
    "heuristic_score",
]

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


@dataclass(frozen=True, slots=True)
class Candidate:
    """One action a step asks about: where it sits in the caller's list, how it was routed."""

    action: Action
    index: int
    route: Route | None = None


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a call gave no value: the text, and the exception behind it when there was one."""

    error: str
    exception: BaseException | None = None


@dataclass(frozen=True, slots=True)
class Simulated:
    """What the world model (or the cache) gave for one action: a prediction or a failure."""

    prediction: Prediction | None = None
    failure: Failure | None = None
    cached: bool = False


@dataclass(frozen=True, slots=True)
class Judged:
    """What the judges made of one prediction: a verdict or a failure, and how long it took."""

    verdict: Verdict | None = None
    failure: Failure | None = None
    seconds: float = 0.0


def decide(
    candidate: Candidate,
    simulated: Simulated,
    judged: Judged | None,
    *,
    veto_outcomes: Set[Outcome],
    hazard: Signal | None = None,
) -> Decision:
    """The decision for one candidate from what its step computed.

    Without a verdict the decision is ``unsimulated`` with the error; the
    engine then applies its ``on_error`` policy (:mod:`.safety`). ``hazard``
    (an action-level judge's signal) joins the signals of a judged decision
    unless a judge already gave one of its name.
    """
    pred = simulated.prediction
    meta: dict[str, Any] = {"route": candidate.route.model_dump()} if candidate.route else {}
    fresh = pred is not None and not simulated.cached
    tokens = pred.usage.total_tokens if pred is not None and fresh else 0
    judge_s = judged.seconds if judged is not None else 0.0
    latency = (pred.latency_s if pred is not None and fresh else 0.0) + judge_s
    verdict = judged.verdict if judged is not None else None
    if verdict is None:
        failure = judged.failure if judged is not None else simulated.failure
        error = failure.error if failure is not None else "no verdict"
        exception = failure.exception if failure is not None else None
        signal = Signal(
            source="engine",
            name="engine.judge_error" if pred is not None else "engine.world_model_error",
            outcome=Outcome.UNKNOWN,
            detail=error,
        )
        return Decision(
            action=candidate.action,
            kind=DecisionKind.UNSIMULATED,
            reason=f"the {'judges' if pred is not None else 'world model'} failed: {error}",
            signals=[signal],
            prediction=pred,
            latency_s=latency,
            tokens=tokens,
            cached=simulated.cached,
            error=error,
            error_type=type(exception).__name__ if exception is not None else None,
            exception=exception,
            index=candidate.index,
            metadata=meta,
        )
    veto = verdict.outcome in veto_outcomes
    reason = verdict.reason or f"predicted {verdict.outcome.value}"
    signals = list(verdict.signals)
    if hazard is not None and hazard.name not in {s.name for s in signals}:
        signals.append(hazard)
    return Decision(
        action=candidate.action,
        kind=DecisionKind.VETO if veto else DecisionKind.EXECUTE,
        outcome=verdict.outcome,
        reason=reason,
        signals=signals,
        prediction=pred,
        score=heuristic_score(verdict),
        progress=verdict.progress,
        latency_s=latency,
        tokens=tokens + verdict.tokens,
        cached=simulated.cached,
        index=candidate.index,
        metadata=meta,
    )
