"""The fit behind a calibration: a veto threshold from held-out ``p_failure`` scores.

Pure functions of scores and labels (:func:`fit_threshold`, :func:`fit_domains`,
:func:`reliability_bins`) and the records they give; :mod:`.calibration`
holds the file and where the engine finds it, and re-exports these names.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from aw_lookahead.errors import ConfigError

__all__ = [
    "DOMAIN_MIN_FAILING",
    "DOMAIN_MIN_GOOD",
    "CurvePoint",
    "DomainFit",
    "ReliabilityBin",
    "best_threshold",
    "fit_domains",
    "fit_summary",
    "fit_threshold",
    "reliability_bins",
]

DOMAIN_MIN_FAILING = 5
"""The fewest failing actions of a domain that get it a threshold of its own."""
DOMAIN_MIN_GOOD = 20
"""The fewest good actions of a domain that get it a threshold of its own."""


class CurvePoint(BaseModel):
    """Vetoing every action with ``p_failure >= threshold``: what it catches and costs."""

    model_config = ConfigDict(extra="forbid")

    threshold: float
    catch_rate: float
    false_veto_rate: float


class ReliabilityBin(BaseModel):
    """Actions whose ``p_failure`` fell in ``[low, high)``: how many, and how many failed."""

    model_config = ConfigDict(extra="forbid")

    low: float
    high: float
    count: int
    mean_p_failure: float
    failure_rate: float


class DomainFit(BaseModel):
    """A fit on some actions (one domain's alone, or all): the same meaning as
    :class:`Calibration`'s fields of these names."""

    model_config = ConfigDict(extra="forbid")

    threshold: float | None
    catch_rate: float
    false_veto_rate: float
    failing: int
    good: int
    curve: list[CurvePoint]


def fit_threshold(
    scores: Sequence[float], failed: Sequence[bool], budget: float
) -> tuple[float | None, list[CurvePoint]]:
    """The threshold for ``budget`` and the whole curve, from held-out ``p_failure`` scores.

    An action is vetoed at threshold ``t`` when its score is ``>= t``; every
    positive score level is a candidate. Among those whose false-veto rate
    (good actions vetoed / good actions) is at most ``budget``, the chosen
    one has the largest catch rate less false-veto rate (ties: more caught,
    then fewer false vetoes, then the higher threshold); ``None`` when none
    is within the budget or none catches a failure. The budget is a ceiling,
    not a target: on the embedded model's 1,248 terminal validation actions
    the most catches within 5% cost 38 more good actions blocked (4.8% against
    0.9%) for 2 more failures caught (21.2% against 20.4%).
    """
    if len(scores) != len(failed):
        raise ValueError("scores and labels differ in length")
    n_fail = sum(1 for f in failed if f)
    n_good = len(failed) - n_fail
    if not n_fail or not n_good:
        raise ConfigError(
            f"calibration needs both failing and good actions; got {n_fail} failing and "
            f"{n_good} good: use more or other validation data"
        )
    curve: list[CurvePoint] = []
    for t in sorted({s for s in scores if s > 0}):
        caught = sum(1 for s, f in zip(scores, failed, strict=True) if f and s >= t)
        blocked = sum(1 for s, f in zip(scores, failed, strict=True) if not f and s >= t)
        curve.append(
            CurvePoint(threshold=t, catch_rate=caught / n_fail, false_veto_rate=blocked / n_good)
        )
    return best_threshold(curve, budget), curve


def fit_domains(
    scores: Sequence[float], failed: Sequence[bool], domains: Sequence[str], budget: float
) -> dict[str, DomainFit]:
    """:func:`fit_threshold` on each domain's actions alone, for the domains with at least
    :data:`DOMAIN_MIN_FAILING` failing and :data:`DOMAIN_MIN_GOOD` good actions."""
    fits: dict[str, DomainFit] = {}
    for name in sorted(set(domains)):
        rows = [(s, f) for s, f, d in zip(scores, failed, domains, strict=True) if d == name]
        n_fail = sum(1 for _, f in rows if f)
        if n_fail < DOMAIN_MIN_FAILING or len(rows) - n_fail < DOMAIN_MIN_GOOD:
            continue
        fits[name] = fit_summary([s for s, _ in rows], [f for _, f in rows], budget)
    return fits


def fit_summary(scores: Sequence[float], failed: Sequence[bool], budget: float) -> DomainFit:
    """:func:`fit_threshold` with what its threshold catches and costs (0 for no threshold)
    and the counts it was fit on."""
    threshold, curve = fit_threshold(scores, failed, budget)
    at = next((p for p in curve if p.threshold == threshold), None)
    n_fail = sum(1 for f in failed if f)
    return DomainFit(
        threshold=threshold,
        catch_rate=at.catch_rate if at is not None else 0.0,
        false_veto_rate=at.false_veto_rate if at is not None else 0.0,
        failing=n_fail,
        good=len(failed) - n_fail,
        curve=curve,
    )


def best_threshold(curve: Sequence[CurvePoint], budget: float) -> float | None:
    """The point within ``budget`` with the largest catch rate less false-veto rate (see
    :func:`fit_threshold`); ``None`` when none is within it or none catches anything (vetoing
    only good actions helps no one)."""
    fitting = [p for p in curve if p.false_veto_rate <= budget + 1e-12 and p.catch_rate > 0]
    if not fitting:
        return None
    return max(
        fitting,
        key=lambda p: (
            round(p.catch_rate - p.false_veto_rate, 12),
            p.catch_rate,
            -p.false_veto_rate,
            p.threshold,
        ),
    ).threshold


def reliability_bins(
    scores: Sequence[float], failed: Sequence[bool], bins: int = 5
) -> list[ReliabilityBin]:
    """Reliability diagram data: per ``p_failure`` bin, the observed failure rate."""
    out: list[ReliabilityBin] = []
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        members = [
            (s, f)
            for s, f in zip(scores, failed, strict=True)
            if low <= s < high or (b == bins - 1 and s == 1.0)
        ]
        if members:
            out.append(
                ReliabilityBin(
                    low=low,
                    high=high,
                    count=len(members),
                    mean_p_failure=sum(s for s, _ in members) / len(members),
                    failure_rate=sum(1 for _, f in members if f) / len(members),
                )
            )
    return out
