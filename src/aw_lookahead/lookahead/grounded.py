"""How the engine uses an environment: look at every action first, veto what cannot run.

:func:`observe_actions` asks the engine's :class:`~.environment.Environment`
about a step's actions together, within a time bound; a look that fails or
runs out of time is no observation (the action goes to the world model as
without an environment) and is counted and logged once, never silent.
:func:`observed_veto` is the decision for an action whose need was observed
missing: vetoed with certainty (``p_failure`` 1, basis ``observed``), never
calibrated away, with the environment's explanation and did-you-mean.
:func:`harmless_writes` tells a rename, a copy or a redirect onto a path seen absent
(it creates a file, it loses nothing) from one that overwrites: the text alone cannot,
so without an environment each counts as destructive.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from aw_lookahead.trajectory import Action, Trajectory

from ._decide import Candidate, Judged
from .destructive import action_effects
from .environment import Environment, Observation
from .rules import verdict_from_signals
from .types import Decision, DecisionKind, Outcome, Signal, Verdict

__all__ = [
    "OBSERVED_SIGNAL_PREFIX",
    "ground_hazard",
    "harmless_writes",
    "observe_actions",
    "observed_metadata",
    "observed_veto",
]

OBSERVED_SIGNAL_PREFIX = "observed."
_log = logging.getLogger("aw_lookahead")
_warned: set[str] = set()


async def observe_actions(
    environment: Environment | None,
    trajectory: Trajectory,
    actions: Sequence[Action],
    *,
    timeout_s: float,
) -> tuple[list[Observation | None], int]:
    """One observation per action (``None``: nothing observed), and how many looks failed."""
    if environment is None or not actions:
        return [None] * len(actions), 0
    try:
        async with asyncio.timeout(timeout_s):
            results = await asyncio.gather(
                *(environment.observe(trajectory, a) for a in actions), return_exceptions=True
            )
    except TimeoutError:
        _warn_once("timeout", f"looking at the environment took over {timeout_s:.1f} s")
        return [None] * len(actions), len(actions)
    out: list[Observation | None] = []
    failed = 0
    for result in results:
        if isinstance(result, Observation):
            out.append(result)
            continue
        if isinstance(result, BaseException):
            if not isinstance(result, Exception):
                raise result
            failed += 1
            _warn_once(type(result).__name__, f"{type(result).__name__}: {result}")
        out.append(None)
    return out, failed


def _warn_once(key: str, what: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    _log.warning(
        "aw_lookahead: could not look at the environment (%s); the actions concerned are "
        "left to the world model. Check the environment given to Lookahead(environment=...).",
        what,
    )


def observed_veto(action: Action, index: int, observation: Observation) -> Decision:
    """The veto for an action whose need ``observation`` saw missing (certain: ``p_failure`` 1)."""
    fact = observation.missing
    assert fact is not None
    why = observation.explanation()
    signal = Signal(
        source="observed",
        name=f"{OBSERVED_SIGNAL_PREFIX}missing_{fact.kind}",
        outcome=Outcome.FAILURE,
        matched=fact.subject or fact.where,
        detail=why,
    )
    return Decision(
        action=action,
        kind=DecisionKind.VETO,
        outcome=Outcome.FAILURE,
        reason=why,
        signals=[signal],
        p_failure=1.0,
        index=index,
        metadata=observed_metadata(observation),
    )


def observed_metadata(observation: Observation | None) -> dict[str, Any]:
    """What a decision carries of its observation (nothing when nothing was seen)."""
    if observation is None or observation.empty:
        return {}
    return {"observed": observation.model_dump(mode="json")}


_WRITE_RISKS = frozenset({"risk.destructive_command", "risk.overwrite_command"})


def harmless_writes(
    observation: Observation | None, action: Action, trajectory: Trajectory
) -> bool:
    """Is every effect that makes ``action`` destructive a write onto a path the complete
    look saw absent (``mv a b``, ``cp a b``, ``> f`` creating ``b``/``f``)?"""
    if observation is None or not observation.complete:
        return False
    absent = observation.absent_targets()
    effects = action_effects(action, trajectory) if absent else []
    return bool(effects) and all(e.clobbers in absent for e in effects)


def ground_hazard(
    hazard: Signal | None, judged: Judged | None, candidate: Candidate, trajectory: Trajectory
) -> tuple[Signal | None, Judged | None]:
    """The action's hazard and verdicts, less what its text alone made destructive where
    :func:`harmless_writes` clears it: no hazard, and the verdicts without the rule judge's
    signals that it destroys. A verdict a model judge joined (it has a ``progress``) keeps
    its outcome: which judge made it cannot be told apart."""
    if hazard is None or not harmless_writes(candidate.observation, candidate.action, trajectory):
        return hazard, judged
    if judged is None or judged.verdict is None:
        return None, judged
    samples = tuple(_cleared(v) if v is not None else None for v in judged.samples)
    return None, replace(judged, verdict=_cleared(judged.verdict), samples=samples)


def _cleared(verdict: Verdict) -> Verdict:
    kept = [s for s in verdict.signals if s.name not in _WRITE_RISKS]
    if len(kept) == len(verdict.signals) or verdict.progress is not None:
        return verdict
    return verdict_from_signals(kept).model_copy(update={"tokens": verdict.tokens})
