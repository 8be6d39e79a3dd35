"""The lookahead engine: simulate an agent's actions before they run, judge, prune, rank.

* :class:`Lookahead` - ``gate`` (veto or execute each proposed action),
  ``select`` (best of K candidates), ``rollout`` (simulate a plan).
* Judges: :class:`RuleJudge` (domain rules on the predicted text) and
  :class:`LLMJudge` (a strict JSON verdict from a chat model); any object with
  an async ``judge`` method fits the :class:`Judge` protocol.
* :class:`RiskRouter` - read-only actions may skip simulation.
* :mod:`.safety` - what happens to actions that could not be checked (``on_error``).
* :class:`PredictionCache` - identical (model, history, action, call index)
  costs no model call.

Every :class:`Decision` serialises with ``decision.model_dump(mode="json")``.
"""

from __future__ import annotations

from .cache import PredictionCache
from .engine import Lookahead, default_deadline
from .judges import Judge, LLMJudge
from .routing import RiskRouter, tool_annotations
from .rules import RuleJudge
from .safety import action_hazard, unchecked_note
from .types import Decision, DecisionKind, Outcome, RolloutResult, SelectResult, Signal, Verdict

__all__ = [
    "Decision",
    "DecisionKind",
    "Judge",
    "LLMJudge",
    "Lookahead",
    "Outcome",
    "PredictionCache",
    "RiskRouter",
    "RolloutResult",
    "RuleJudge",
    "SelectResult",
    "Signal",
    "Verdict",
    "action_hazard",
    "default_deadline",
    "tool_annotations",
    "unchecked_note",
]
