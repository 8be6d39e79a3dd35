"""What happens to an action lookahead could not check: the one fail-safe definition.

The engine, the LangGraph adapters and the MCP proxy all decide unchecked
actions here, so the three behave the same way.

An action is *unchecked* when it has no verdict: the world model was
unreachable, slower than the deadline, out of context, answered garbage, a
judge failed, or the action was routed past simulation (``simulate="never"``).
Action-level judges need no prediction and run on every action, simulated or
not (:func:`action_hazard`), whatever its length: terminal text by its effect
(:mod:`.destructive`: what destroys or overwrites), tool calls by their
annotations or, for a tool without any, by what its name, schema and
arguments say (:mod:`.tool_effects`: a tool that looks read-only runs, the
rest may destroy data).

``on_error`` policies (:data:`ErrorPolicy`):

* ``"fail_safe"`` (default): an unchecked action runs only when no
  action-level judge calls it destructive; a destructive one is vetoed as
  "could not be checked".
* ``"fail_open"``: every unchecked action runs.
* ``"fail_closed"``: every unchecked action is vetoed.

Never silent: every unchecked decision carries its cause and remedy
(``Decision.metadata["unchecked"]``), is counted in the engine's stats, is
logged as a WARNING on the ``aw_lookahead`` logger once per cause and engine,
and an executed one has a short note for the agent (:func:`unchecked_note`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Literal

from aw_lookahead.trajectory import Action, Trajectory

from .destructive import action_effect
from .routing import RiskRouter
from .tool_effects import tool_call, tool_risk
from .types import Decision, DecisionKind, Outcome, Signal

__all__ = [
    "AGENT_CAUSES",
    "ERROR_POLICIES",
    "REMEDIES",
    "ErrorPolicy",
    "WarnOnce",
    "action_hazard",
    "classify_error",
    "logger",
    "unchecked_decision",
    "unchecked_note",
]

ErrorPolicy = Literal["fail_safe", "fail_open", "fail_closed"]
ERROR_POLICIES: tuple[str, ...] = ("fail_safe", "fail_open", "fail_closed")

logger = logging.getLogger("aw_lookahead")

# cause -> what the operator can do about it (said once per cause in the log,
# and in every decision's metadata).
REMEDIES: dict[str, str] = {
    "unreachable": (
        "start a world model (`aw-lookahead serve --local` for the embedded CPU model) and "
        "point AW_LOOKAHEAD_BASE_URL / base_url at it"
    ),
    "deadline": (
        "the world model is slower than the deadline: raise OpenAIWorldModel(timeout=...) "
        "(the engine's deadline follows it), lower max_tokens, or use a faster server"
    ),
    "timeout": (
        "the world model did not answer within its timeout: raise timeout=..., lower "
        "max_tokens, or check that the server is not overloaded"
    ),
    "context": (
        "the prompt does not fit the model's context: shorten the task or the tool "
        "definitions, lower max_tokens, or serve the model with a larger --max-model-len"
    ),
    "model": "the server does not serve that model: set AW_LOOKAHEAD_MODEL / model=...",
    "server": "the world-model server answered with an error: see its log",
    "reply": "the world model's reply had no usable observation: check the model and prompts",
    "judge": "a feasibility judge gave no verdict: check the judge's model and server",
    "not_simulated": "simulation is switched off (simulate='never')",
    "error": "the world model failed: see the error text",
}


# cause -> what the agent is told: the situation in plain words. Operator instructions
# (commands, URLs, settings) stay in the log and the decision's metadata, never in text an
# agent's policy model reads and might act on.
AGENT_CAUSES: dict[str, str] = {
    "unreachable": "the world model could not be reached",
    "deadline": "the world model did not answer in time",
    "timeout": "the world model did not answer in time",
    "context": "the action and its history were too long to simulate",
    "model": "the world model is not available",
    "server": "the world-model server failed",
    "reply": "the world model's answer was unusable",
    "judge": "a judge gave no verdict",
    "not_simulated": "simulation is switched off",
    "error": "the world model failed",
}


def classify_error(error: str | None, *, judged: bool = False) -> str:
    """The cause key (see :data:`REMEDIES`) of an engine error text."""
    text = (error or "").lower()
    if judged:
        return "judge"
    if "deadline" in text:
        return "deadline"
    if "serverunreachable" in text or "no world-model server answers" in text:
        return "unreachable"
    if "timeout" in text or "did not answer within" in text:
        return "timeout"
    if "contexttoolong" in text or "does not fit" in text:
        return "context"
    if "modelnotserved" in text or "does not serve model" in text:
        return "model"
    if "replyparse" in text:
        return "reply"
    if "servererror" in text or "answered http" in text:
        return "server"
    return "error"


def action_hazard(router: RiskRouter, trajectory: Trajectory, action: Action) -> Signal | None:
    """Why ``action`` may destroy data, judged from the action alone, or ``None``.

    Runs without a prediction: terminal text by its effect (``destroys`` or
    ``overwrites``), tool calls by their annotations or inferred risk.
    """
    call = tool_call(trajectory, action)
    if call is not None:
        name, arguments = call
        risk = tool_risk(router.find_tool(trajectory, name), name, arguments)
        if risk.kind in ("read_only", "non_destructive"):
            return None
        why = risk.reason
        signal = (
            "risk.destructive_tool"
            if risk.kind == "destroys" and risk.inferred
            else "risk.mcp_destructive_hint"
        )
    else:
        effect = action_effect(action, trajectory)
        if effect is None:
            return None
        why = effect.reason
        signal = (
            "risk.destructive_command"
            if effect.severity == "destroys"
            else "risk.overwrite_command"
        )
    return Signal(source="action", name=signal, outcome=Outcome.RISKY, detail=why)


def unchecked_decision(
    decision: Decision,
    *,
    hazard: Signal | None,
    policy: ErrorPolicy,
    cause: str,
) -> Decision:
    """Apply ``policy`` to a decision that has no verdict (kind ``unsimulated``/``skipped``)."""
    remedy = REMEDIES.get(cause, REMEDIES["error"])
    what = AGENT_CAUSES.get(cause, AGENT_CAUSES["error"])
    signals = list(decision.signals) + ([hazard] if hazard is not None else [])
    meta = {**decision.metadata, "unchecked": {"cause": cause, "remedy": remedy, "policy": policy}}
    blocked = policy == "fail_closed" or (policy == "fail_safe" and hazard is not None)
    if blocked:
        because = (
            f"it may be destructive ({hazard.detail})"
            if hazard is not None
            else "on_error='fail_closed' blocks every unchecked action"
        )
        reason = f"could not be checked ({what}) and {because}; blocked by on_error='{policy}'"
        return decision.model_copy(
            update={
                "kind": DecisionKind.VETO,
                "outcome": Outcome.RISKY if hazard is not None else Outcome.UNKNOWN,
                "reason": reason,
                "signals": signals,
                "metadata": meta,
            }
        )
    if decision.kind is DecisionKind.SKIPPED:
        return decision.model_copy(update={"signals": signals, "metadata": meta})
    reason = f"could not be checked ({what}); runs unchecked (on_error='{policy}')"
    return decision.model_copy(
        update={
            "kind": DecisionKind.UNSIMULATED,
            "reason": reason,
            "signals": signals,
            "metadata": meta,
        }
    )


def unchecked_note(decision: Decision) -> str | None:
    """The short note an agent sees on the result of an action that ran unchecked, or ``None``."""
    if decision.kind is not DecisionKind.UNSIMULATED:
        return None
    info = decision.metadata.get("unchecked") or {}
    cause = info.get("cause", "error") if isinstance(info, Mapping) else "error"
    words = AGENT_CAUSES.get(str(cause), AGENT_CAUSES["error"])
    return f"[lookahead] Note: this ran WITHOUT a lookahead check ({words})."


_EFFECT = {
    "fail_safe": "destructive ones are blocked, the rest run",
    "fail_open": "they all run",
    "fail_closed": "they are all blocked",
}


class WarnOnce:
    """Logs one WARNING per cause (per owner), with the remedy."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def warn(self, decision: Decision) -> None:
        info = decision.metadata.get("unchecked")
        if not isinstance(info, Mapping):
            return
        cause = str(info.get("cause"))
        if cause in self._seen or cause == "not_simulated":
            return
        self._seen.add(cause)
        policy = str(info.get("policy"))
        logger.warning(
            "aw-lookahead could not check an action (%s: %s). Unchecked actions follow "
            "on_error=%r: %s. To fix: %s. (Logged once per cause.)",
            cause,
            decision.error or decision.reason,
            policy,
            _EFFECT.get(policy, ""),
            info.get("remedy"),
        )
