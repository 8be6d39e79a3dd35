"""Shadow mode's one record: what the world model predicted next to what really happened.

Both adapters write it: :class:`~aw_lookahead.langgraph.ShadowMiddleware`
(``source="langgraph"``) and the MCP proxy in ``shadow`` mode
(``source="mcp"``), so their logs share one format, one divergence measure
and can be compared, concatenated and trained on. A :class:`ShadowPair`
carries the training sample itself (``sample``: the history the engine saw
plus the action, whose target turn holds the *real* observation), so
``aw-lookahead train --data shadow.jsonl`` reads shadow logs as they are
(see :func:`aw_lookahead.training.data.read_training_records`).

Guarantees: :func:`shadow_pair` never raises on a missing prediction (the
pair says why in ``predicted_error``); logs are written with
:class:`~aw_lookahead.trajectory.JsonlWriter`, so every line is whole,
redacted and the file is created ``0600``; :func:`read_shadow_pairs` turns any
bad line into one error naming file, line and field.

The divergence measure, :func:`divergence`, is ``1 - F1`` of the token
multisets of the two texts after normalisation (per line: trailing whitespace
stripped, runs of whitespace collapsed; blank lines dropped). 0.0 means the
same tokens, 1.0 no token in common; two empty texts diverge by 0.0. Why
this one and not a character diff (``difflib``): it is linear in the text
length, so long observations need no cut-off; it is symmetric; it ignores
layout (whitespace, blank lines) and the order of lines, which tools vary
without meaning (a listing sorted differently is the same observation); and
it is a multiset F1 like the evaluation's line F1, so shadow numbers read
like ``eval`` numbers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from aw_lookahead._jsonl import validate_record
from aw_lookahead._metrics import multiset_f1
from aw_lookahead.errors import TrajectoryError
from aw_lookahead.trajectory import Action, Trajectory, TurnSample, iter_jsonl_dicts

from .types import Decision, DecisionKind, Outcome

__all__ = [
    "ShadowPair",
    "ShadowSource",
    "divergence",
    "is_shadow_record",
    "load_shadow_pair",
    "read_shadow_pairs",
    "shadow_pair",
]

ShadowSource = Literal["langgraph", "mcp"]

_WS = re.compile(r"\s+")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for raw in text.splitlines():
        line = _WS.sub(" ", raw.rstrip())
        if line.strip():
            out.extend(line.split())
    return out


def divergence(predicted: str, real: str) -> float:
    """``1 - F1`` between the token multisets of ``predicted`` and ``real`` (0 = same)."""
    return round(1.0 - multiset_f1(Counter(_tokens(predicted)), Counter(_tokens(real))), 6)


class ShadowPair(BaseModel):
    """One shadowed call: the simulation next to the real result, and the sample to train on.

    ``run_id`` groups the calls of one agent run (LangGraph thread) or client
    session (MCP proxy); ``started_at`` is the call's start in Unix seconds,
    ``latency_s`` how long the pair took to complete. ``predicted`` is None
    when there is no prediction and ``predicted_error`` says why.
    ``would_execute`` is what gate mode would have done, ``outcome_agrees``
    whether a predicted failure matched a real error (None when the action was
    not simulated). ``sample.observation`` is ``real``.
    """

    model_config = ConfigDict(extra="forbid")

    source: ShadowSource
    run_id: str
    tool_call_id: str | None
    tool: str
    action: Action
    model: str
    started_at: float
    latency_s: float = 0.0
    predicted: str | None
    predicted_outcome: str | None
    predicted_error: str | None = None
    real: str
    real_is_error: bool
    divergence: float | None
    would_execute: bool | None
    outcome_agrees: bool | None
    decision: dict[str, Any] | None
    sample: TurnSample


def shadow_pair(
    *,
    source: ShadowSource,
    run_id: str,
    tool_call_id: str | None,
    tool: str,
    history: Trajectory,
    action: Action,
    real: str,
    real_is_error: bool,
    decision: Decision | None,
    model: str,
    started_at: float,
    latency_s: float,
    predicted_error: str | None = None,
) -> ShadowPair:
    """Build the record of one call from the history the engine saw and both outcomes.

    ``predicted_error`` is used when there is no ``decision`` at all (the
    simulation raised or never came); otherwise the decision's own error is
    logged. ``model`` is the world model's id, replaced by the one the
    prediction reports when there is a prediction.
    """
    predicted = decision.predicted_observation if decision is not None else None
    simulated = decision is not None and decision.kind is not DecisionKind.UNSIMULATED
    if decision is not None and decision.prediction is not None and decision.prediction.model:
        model = decision.prediction.model
    full = history.with_turn(action, real)
    return ShadowPair(
        source=source,
        run_id=run_id,
        tool_call_id=tool_call_id,
        tool=tool,
        action=action,
        model=model,
        started_at=started_at,
        latency_s=round(latency_s, 6),
        predicted=predicted,
        predicted_outcome=decision.outcome.value if decision is not None else None,
        predicted_error=decision.error if decision is not None else predicted_error,
        real=real,
        real_is_error=real_is_error,
        divergence=divergence(predicted, real) if predicted is not None else None,
        would_execute=decision.executes if decision is not None else None,
        outcome_agrees=(decision.outcome is Outcome.FAILURE) == real_is_error
        if decision is not None and simulated
        else None,
        decision=decision.model_dump(mode="json") if decision is not None else None,
        sample=TurnSample(trajectory=full, turn_idx=len(full.turns)),
    )


def is_shadow_record(obj: dict[str, Any]) -> bool:
    """True when a decoded JSONL object looks like a shadow log line (either adapter, any age)."""
    return "real" in obj and "predicted" in obj


def load_shadow_pair(obj: dict[str, Any], *, source: str, line: int) -> ShadowPair:
    """Validate one decoded line; a bad one raises a TrajectoryError naming file, line and field."""
    if "sample" not in obj:
        raise TrajectoryError(
            "a shadow log line needs 'sample' (the history and the real observation); logs "
            "written before aw-lookahead shared one shadow format lack it: record them again",
            source=source,
            line=line,
            field="sample",
        )
    return validate_record(ShadowPair, obj, source, line)


def read_shadow_pairs(path: str | Path) -> Iterator[ShadowPair]:
    """Stream the pairs of a shadow log (either adapter), each validated.

    Lines are in completion order (a pair is written once both halves are in);
    sort by ``started_at`` for call order.
    """
    for lineno, obj in iter_jsonl_dicts(path):
        yield load_shadow_pair(obj, source=str(path), line=lineno)
