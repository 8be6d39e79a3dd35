"""What a veto rests on: the predicted observation, the action's own text, or nothing checked.

A rule that reads the *predicted observation* (``No such file or directory``,
a traceback, ``isError``) is evidence the world model contributed. A rule
that reads the *action* (``rm -rf`` on a path the task needs, an MCP tool's
``destructiveHint``) would veto the same call with any world model, or none.
Benchmarks and demos report the two apart so a regex is never mistaken for
a prediction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from .types import Decision, DecisionKind, Signal

__all__ = ["ACTION_SIGNAL_NAMES", "VetoBasis", "veto_basis"]

VetoBasis = Literal["prediction", "action", "unchecked"]

ACTION_SIGNAL_NAMES: frozenset[str] = frozenset({"risk.destructive_command"})
"""Rule signals that read the action, not the prediction (plus any ``action.*`` /
``router.*`` name or a ``router`` / ``action`` source)."""

_ACTION_PREFIXES = ("action.", "router.", "mcp.destructive")


def _is_action_signal(source: str, name: str) -> bool:
    return (
        name in ACTION_SIGNAL_NAMES
        or name.startswith(_ACTION_PREFIXES)
        or source in ("router", "action")
    )


def veto_basis(decision: Decision | Mapping[str, Any]) -> VetoBasis | None:
    """``None`` for a decision that executes; else what the veto rests on.

    ``prediction``: a signal read from the predicted observation (a rule or
    the LLM judge) has the deciding outcome. ``action``: only action-level
    rules decided. ``unchecked``: nothing was judged (the world model or the
    judges failed and the policy blocks unchecked actions). Accepts a
    :class:`~aw_lookahead.lookahead.Decision` or its ``model_dump()``.
    """
    if isinstance(decision, Decision):
        kind, outcome = decision.kind.value, decision.outcome.value
        signals: Iterable[Signal | Mapping[str, Any]] = decision.signals
    else:
        kind, outcome = str(decision.get("kind")), str(decision.get("outcome"))
        signals = decision.get("signals") or []
    if kind != DecisionKind.VETO.value:
        return None
    deciding = []
    for s in signals:
        data = s.model_dump(mode="json") if isinstance(s, Signal) else dict(s)
        if str(data.get("outcome")) == outcome:
            deciding.append((str(data.get("source", "")), str(data.get("name", ""))))
    if any(src in ("rule", "llm") and not _is_action_signal(src, n) for src, n in deciding):
        return "prediction"
    if any(_is_action_signal(src, n) for src, n in deciding):
        return "action"
    return "unchecked"
