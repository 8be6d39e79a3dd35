"""The JSON shapes of the ``simulate`` and ``lookahead`` tools (inputs and structured outputs).

They are pydantic models so the MCP server derives exact input and output
JSON schemas from them; clients get ``structured_content`` that validates
against the advertised ``outputSchema``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from aw_lookahead.lookahead.types import Decision
from aw_lookahead.trajectory import Action, Domain, Trajectory, Turn

DomainName = Literal["mcp", "search", "terminal", "swe", "android", "web", "os"]


class HistoryTurn(BaseModel):
    """One earlier step of the agent: the action it took and what the environment answered."""

    model_config = ConfigDict(extra="forbid")

    action: Action = Field(
        description="The action as the agent sent it: a JSON tool call "
        '({"name": ..., "arguments": {...}}), a keystroke list, or plain text.'
    )
    observation: str = Field(description="What the real environment returned, verbatim.")


class SignalView(BaseModel):
    """One piece of evidence behind a verdict."""

    source: str
    name: str
    outcome: str
    matched: str | None = None
    detail: str = ""


class DecisionView(BaseModel):
    """The engine's decision on one action, with its evidence."""

    index: int = Field(description="Position of the action in the request (0-based).")
    action: Action
    kind: str = Field(description="execute | veto | skipped | unsimulated")
    outcome: str = Field(description="success | failure | no_op | risky | unknown")
    executes: bool = Field(description="True when the action should be run for real.")
    predicted_observation: str | None = Field(
        default=None, description="The world model's predicted observation, if it ran."
    )
    reason: str = ""
    score: float | None = None
    signals: list[SignalView] = Field(default_factory=list)
    explanation: str = Field(description="A message an agent can act on.")
    latency_s: float = 0.0
    tokens: int = 0
    cached: bool = Field(default=False, description="Answered from the prediction cache.")
    p_failure: float | None = Field(
        default=None,
        description="Share of the action's predictions that say it fails (no prediction: null).",
    )
    threshold: float | None = Field(
        default=None, description="The p_failure that vetoes it (null: the fail-safe rule)."
    )
    uncertain: bool = Field(
        default=False, description="It runs although some prediction says it fails."
    )
    error: str | None = None


class SimulateResult(BaseModel):
    """Result of the ``simulate`` tool."""

    observation: str = Field(description="The predicted observation (what the tool would return).")
    outcome: str = Field(description="success | failure | no_op | risky | unknown")
    feasible: bool = Field(
        description="False when the prediction says the action fails or is risky."
    )
    reason: str = ""
    signals: list[SignalView] = Field(default_factory=list)
    model: str = ""
    latency_s: float = Field(
        default=0.0, description="Seconds this answer took (a cached answer: the lookup only)."
    )
    tokens: int = Field(default=0, description="Model tokens spent (0 when cached).")
    cached: bool = Field(default=False, description="Answered from the prediction cache.")
    truncated: bool = Field(default=False, description="The model hit its output budget.")
    trimmed_turns: int = Field(default=0, description="History turns dropped to fit the context.")
    p_failure: float | None = Field(
        default=None,
        description="Share of the action's predictions that say it fails (no prediction: null).",
    )
    threshold: float | None = Field(
        default=None, description="The p_failure that vetoes it (null: the fail-safe rule)."
    )
    uncertain: bool = Field(
        default=False, description="It runs although some prediction says it fails."
    )
    basis: str | None = Field(
        default=None,
        description="What a veto rests on: observed (the environment was looked at), "
        "prediction, action (a destructive action rule) or unchecked; null when it runs.",
    )


class LookaheadResult(BaseModel):
    """Result of the ``lookahead`` tool: candidates ranked best first."""

    chosen_index: int | None = Field(
        description="Index (into the request's candidates) of the action to execute; null if all "
        "were pruned."
    )
    chosen: DecisionView | None = None
    decisions: list[DecisionView] = Field(description="All candidates, best first.")
    pruned: list[DecisionView] = Field(
        description="Candidates that should not be executed, and why."
    )
    reason: str = ""


def decision_view(decision: Decision) -> DecisionView:
    """Flatten an engine decision for the wire."""
    return DecisionView(
        index=decision.index,
        action=decision.action,
        kind=str(decision.kind.value),
        outcome=str(decision.outcome.value),
        executes=decision.executes,
        predicted_observation=decision.predicted_observation,
        reason=decision.reason,
        score=decision.score,
        signals=[SignalView(**s.model_dump(mode="json")) for s in decision.signals],
        explanation=decision.explain(),
        latency_s=decision.latency_s,
        tokens=decision.tokens,
        cached=decision.cached,
        p_failure=decision.p_failure,
        threshold=decision.threshold,
        uncertain=decision.uncertain,
        error=decision.error,
    )


def build_trajectory(
    domain: str,
    history: list[HistoryTurn] | None,
    *,
    task: str | None = None,
    tools: list[dict[str, Any]] | None = None,
    initial_state: str | None = None,
) -> Trajectory:
    """The trajectory the engine sees, built from the tool's arguments."""
    return Trajectory(
        domain=Domain.parse(domain),
        task=task,
        tools=tools,
        initial_state=initial_state,
        turns=[Turn(action=h.action, observation=h.observation) for h in history or []],
    )
