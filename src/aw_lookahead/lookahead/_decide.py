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

from ._argument_check import SET_ASIDE
from .confidence import token_p_failure
from .environment import Observation
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
    """The verdict's progress if given, else the deterministic heuristic (see :mod:`.selection`)."""
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
    ``context``, ...). ``uncertain`` counts actions that ran although some
    prediction said they fail (``p_failure`` below the veto threshold, or
    a failure set aside as refuted). ``observed_vetoes`` counts actions vetoed
    because the environment showed a need missing (no model call);
    ``observe_errors`` looks at the environment that failed or ran out of time.
    """

    actions: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    skipped: int = 0
    errors: int = 0
    unchecked: int = 0
    blocked_unchecked: int = 0
    uncertain: int = 0
    observed_vetoes: int = 0
    observe_errors: int = 0
    causes: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One action a step asks about: where it sits in the caller's list, how it was routed."""

    action: Action
    index: int
    route: Route | None = None
    observation: Observation | None = None


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
    """What the judges made of one prediction: a verdict or a failure, and how long it took.

    ``samples`` holds the verdict on each of the prediction's samples, in
    order (``None`` where its judges failed).
    """

    verdict: Verdict | None = None
    failure: Failure | None = None
    seconds: float = 0.0
    samples: tuple[Verdict | None, ...] = ()


def decide(
    candidate: Candidate,
    simulated: Simulated,
    judged: Judged | None,
    *,
    veto_outcomes: Set[Outcome],
    hazard: Signal | None = None,
    threshold: float | None = 1.0,
) -> Decision:
    """The decision for one candidate from what its step computed.

    Without a verdict the decision is ``unsimulated`` with the error; the
    engine then applies its ``on_error`` policy (:mod:`.safety`). ``hazard``
    (an action-level judge's signal) joins the signals of a judged decision
    unless a judge already gave one of its name. ``threshold`` is the
    ``p_failure`` that vetoes a non-destructive action (:func:`_rule`).
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
    assert pred is not None
    samples = judged.samples if judged is not None else ()
    rule = _rule(pred, verdict, samples, veto_outcomes, hazard, threshold)
    signals = list(rule.verdict.signals)
    if hazard is not None and hazard.name not in {s.name for s in signals}:
        signals.append(hazard)
    return Decision(
        action=candidate.action,
        kind=DecisionKind.VETO if rule.veto else DecisionKind.EXECUTE,
        outcome=rule.outcome,
        reason=rule.reason,
        signals=signals,
        prediction=rule.shown,
        score=rule.score,
        progress=verdict.progress,
        latency_s=latency,
        tokens=tokens + verdict.tokens + sum(v.tokens for v in rule.others),
        cached=simulated.cached,
        p_failure=rule.p_failure,
        predictions=rule.predictions,
        threshold=rule.threshold,
        uncertain=rule.uncertain,
        index=candidate.index,
        metadata=meta,
    )


@dataclass(frozen=True, slots=True)
class _Ruling:
    """What the veto rule made of an action's judged predictions."""

    veto: bool
    outcome: Outcome
    reason: str
    verdict: Verdict  # the verdict whose evidence the decision shows
    shown: Prediction  # the prediction the decision shows (a failing one for a veto)
    others: tuple[Verdict, ...]  # the samples' verdicts
    score: float
    p_failure: float
    predictions: int
    threshold: float | None
    uncertain: bool = False


def _p_failure(
    prediction: Prediction, verdict: Verdict, verdicts: list[Verdict], counted: Set[Outcome]
) -> float:
    """The share of ``verdicts`` with an outcome in ``counted``; for a single prediction with
    token log-probabilities, the probability of its failure (:mod:`.confidence`)."""
    hits = sum(1 for v in verdicts if v.outcome in counted)
    if len(verdicts) == 1:
        from_tokens = token_p_failure(prediction, verdict, hits > 0)
        if from_tokens is not None:
            return from_tokens
    return hits / len(verdicts)


def _rule(
    prediction: Prediction,
    verdict: Verdict,
    samples: tuple[Verdict | None, ...],
    veto_outcomes: Set[Outcome],
    hazard: Signal | None,
    threshold: float | None,
) -> _Ruling:
    """The veto rule: fail-safe for destructive actions, calibrated abstention for the rest.

    ``p_failure`` is the share of judged predictions (the main one and its
    samples) with a veto outcome; for a single prediction with token
    log-probabilities, the probability of its failure (:mod:`.confidence`).
    A destructive action (an action-level
    hazard, or a verdict of ``risky``) is vetoed when the main prediction's
    outcome is a veto outcome, as without calibration; its ``p_failure``
    counts only predictions that it fails or does nothing (a prediction that
    it succeeds is why it is blocked, not a failure). Any other action is
    vetoed only when ``p_failure`` reaches ``threshold`` (never when it is
    ``None``), showing a failing prediction and its reason; below it the
    action runs, marked uncertain when some prediction fails, or when a
    prediction of failure was set aside as refuted (:mod:`._argument_check`).
    """
    pairs = [(prediction.observation, verdict)] + [
        (text, v) for text, v in zip(prediction.samples, samples, strict=False) if v is not None
    ]
    verdicts = [v for _, v in pairs]
    failing = [i for i, v in enumerate(verdicts) if v.outcome in veto_outcomes]
    n = len(verdicts)
    destructive = hazard is not None or verdict.outcome is Outcome.RISKY
    counted = veto_outcomes - {Outcome.RISKY} if destructive else veto_outcomes
    p_failure = _p_failure(prediction, verdict, verdicts, counted)
    set_aside = any(s.name == SET_ASIDE for v in verdicts for s in v.signals)
    common: dict[str, Any] = {
        "others": tuple(verdicts[1:]),
        "score": sum(heuristic_score(v) for v in verdicts) / n,
        "p_failure": p_failure,
        "predictions": n,
    }
    if destructive:
        reason = verdict.reason or f"predicted {verdict.outcome.value}"
        if hazard is not None and verdict.outcome in veto_outcomes:
            predicted = verdict.outcome in (Outcome.FAILURE, Outcome.NO_OP) and verdict.reason
            reason = f"{hazard.detail}: it destroys data if it succeeds, so it is blocked first" + (
                f" (the prediction also says: {verdict.reason})" if predicted else ""
            )
        return _Ruling(
            veto=verdict.outcome in veto_outcomes,
            outcome=verdict.outcome,
            reason=reason,
            verdict=verdict,
            shown=prediction,
            threshold=None,
            uncertain=set_aside and verdict.outcome not in veto_outcomes,
            **common,
        )
    if not failing:
        return _Ruling(
            veto=False,
            outcome=verdict.outcome,
            reason=verdict.reason or f"predicted {verdict.outcome.value}",
            verdict=verdict,
            shown=prediction,
            threshold=threshold,
            uncertain=set_aside,
            **common,
        )
    first = verdicts[failing[0]]
    why = first.reason or f"predicted {first.outcome.value}"
    if threshold is not None and p_failure >= threshold:
        text = pairs[failing[0]][0]
        shown = (
            prediction if failing[0] == 0 else prediction.model_copy(update={"observation": text})
        )
        return _Ruling(
            veto=True,
            outcome=first.outcome,
            reason=why,
            verdict=first,
            shown=shown,
            threshold=threshold,
            **common,
        )
    bar = (
        f"below the veto threshold {threshold:.2f}"
        if threshold is not None
        else "and this model's predictions never veto (no threshold meets its false-veto budget)"
    )
    says = "the prediction says" if n == 1 else f"{len(failing)} of {n} predictions say"
    return _Ruling(
        veto=False,
        outcome=Outcome.UNKNOWN,
        reason=(
            f"{says} it fails ({why}), but p_failure {p_failure:.2f} is {bar}: it runs, "
            "with the prediction attached as uncertain"
        ),
        verdict=first,
        shown=prediction,
        threshold=threshold,
        uncertain=True,
        **common,
    )
