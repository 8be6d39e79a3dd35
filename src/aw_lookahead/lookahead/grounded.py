"""How the engine uses an environment: look at every action first, veto what cannot run.

:func:`observe_actions` asks the engine's :class:`~.environment.Environment`
about a step's actions together, within a time bound; a look that fails or
runs out of time is no observation (the action goes to the world model as
without an environment) and is counted and logged once, never silent.
:func:`observed_veto` is the decision for an action whose need was observed
missing: vetoed with certainty (``p_failure`` 1, basis ``observed``), never
calibrated away, with the environment's explanation and did-you-mean.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from aw_lookahead.trajectory import Action, Trajectory

from .environment import Environment, Observation
from .types import Decision, DecisionKind, Outcome, Signal

__all__ = ["OBSERVED_SIGNAL_PREFIX", "observe_actions", "observed_metadata", "observed_veto"]

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
