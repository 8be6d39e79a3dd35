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

from .cache import PredictionCache, call_index
from .engine import EngineStats, Lookahead, default_deadline, heuristic_score
from .judges import VERDICT_SCHEMA, Judge, LLMJudge, combine_verdicts
from .options import CheckingPolicy, EngineOptions, EngineOptionsBase, SimulatePolicy
from .routing import (
    RiskRouter,
    Route,
    is_read_only_command,
    terminal_command_text,
    tool_annotations,
)
from .rules import RuleJudge, rule_signals
from .safety import ERROR_POLICIES, ErrorPolicy, action_hazard, unchecked_note
from .types import (
    SEVERITY,
    Decision,
    DecisionKind,
    Outcome,
    RolloutResult,
    SelectResult,
    Signal,
    Verdict,
)

__all__ = [
    "ERROR_POLICIES",
    "SEVERITY",
    "VERDICT_SCHEMA",
    "CheckingPolicy",
    "Decision",
    "DecisionKind",
    "EngineOptions",
    "EngineOptionsBase",
    "EngineStats",
    "ErrorPolicy",
    "Judge",
    "LLMJudge",
    "Lookahead",
    "Outcome",
    "PredictionCache",
    "RiskRouter",
    "RolloutResult",
    "Route",
    "RuleJudge",
    "SelectResult",
    "Signal",
    "SimulatePolicy",
    "Verdict",
    "action_hazard",
    "call_index",
    "combine_verdicts",
    "default_deadline",
    "heuristic_score",
    "is_read_only_command",
    "rule_signals",
    "terminal_command_text",
    "tool_annotations",
    "unchecked_note",
]
