"""Engine data types: outcomes, signals, verdicts and decisions (all JSON-serialisable).

Every decision carries its evidence: the predicted observation, the signals
that fired (with the matched text), the score, latency and tokens. The
LangGraph state, the MCP tools and the logs all carry ``Decision.model_dump(mode="json")``.

What a veto rests on (:func:`veto_basis`) is read from those signals: a rule
that reads the *predicted observation* (``No such file or directory``, a
traceback, ``isError``) is evidence the world model contributed; a rule that
reads the *action* (``rm -rf`` on a path the task needs, an MCP tool's
``destructiveHint``) would veto the same call with any world model, or none.
Benchmarks and demos report the two apart so a regex is never mistaken for a
prediction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from aw_lookahead.trajectory import Action, Trajectory, action_text
from aw_lookahead.worldmodel.base import Prediction

__all__ = [
    "ACTION_SIGNAL_NAMES",
    "SEVERITY",
    "Decision",
    "DecisionKind",
    "Outcome",
    "RolloutResult",
    "SelectResult",
    "Signal",
    "Verdict",
    "VetoBasis",
    "veto_basis",
]


class Outcome(StrEnum):
    """What a predicted observation says the action did."""

    SUCCESS = "success"
    FAILURE = "failure"
    NO_OP = "no_op"
    RISKY = "risky"
    UNKNOWN = "unknown"


# Worst first: when judges disagree, the more severe outcome wins.
SEVERITY: dict[Outcome, int] = {
    Outcome.RISKY: 4,
    Outcome.FAILURE: 3,
    Outcome.NO_OP: 2,
    Outcome.UNKNOWN: 1,
    Outcome.SUCCESS: 0,
}


class Signal(BaseModel):
    """One piece of evidence, e.g. a rule that matched the predicted text."""

    model_config = ConfigDict(extra="forbid")

    source: str  # "rule", "llm", "router", "engine"
    name: str  # e.g. "shell.command_not_found", "mcp.is_error", "risk.force_push"
    outcome: Outcome
    matched: str | None = None  # the text that matched, verbatim
    detail: str = ""


class Verdict(BaseModel):
    """A judge's reading of one prediction."""

    model_config = ConfigDict(extra="forbid")

    outcome: Outcome
    progress: float | None = Field(default=None, ge=0.0, le=1.0)
    reason: str = ""
    signals: list[Signal] = Field(default_factory=list)
    tokens: int = 0  # tokens the judge itself spent (an LLM judge)


class DecisionKind(StrEnum):
    """What the engine decided for one action.

    ``execute``: simulated and found feasible. ``veto``: simulated and pruned,
    or unchecked and blocked by ``on_error`` (``fail_safe``: destructive;
    ``fail_closed``: any). ``skipped``: routed past simulation (read-only),
    executes. ``unsimulated``: could not be checked (world model or judge
    failed) and ``on_error`` lets it execute without lookahead.
    """

    EXECUTE = "execute"
    VETO = "veto"
    SKIPPED = "skipped"
    UNSIMULATED = "unsimulated"


_NEXT_STEP: dict[Outcome, str] = {
    Outcome.FAILURE: (
        "It is predicted to fail: check names, paths and arguments (look first, e.g. list "
        "the directory or read the file), then try a corrected action."
    ),
    Outcome.RISKY: (
        "It is predicted to destroy or overwrite data: take a safer step that reaches the "
        "goal (back up or move instead of deleting, narrow the target), or ask the user to "
        "confirm it first."
    ),
    Outcome.NO_OP: (
        "It is predicted to change nothing: take a step that makes progress toward the task "
        "instead."
    ),
}
_NEXT_STEP_OBSERVED = (
    "It cannot succeed as written (this was observed, not predicted): use a name that "
    "exists (see Why), or create what is missing first."
)
_NEXT_STEP_ERROR = (
    "Lookahead could not check it (see Why): choose a step that cannot destroy data, "
    "or ask the user to run or approve it."
)


class Decision(BaseModel):
    """The engine's decision on one action, with its evidence.

    When the action could not be checked, ``error`` is the failure as text,
    ``error_type`` its exception's class name (e.g. ``"ServerUnreachableError"``)
    and ``exception`` the exception itself, for ``isinstance`` checks
    (e.g. against :class:`~aw_lookahead.errors.WorldModelError`); ``exception``
    is left out of ``model_dump``, JSON and equality, so a decision still equals
    its JSON round trip (where ``exception`` is ``None``).
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    action: Action
    kind: DecisionKind
    outcome: Outcome = Outcome.UNKNOWN
    reason: str = ""
    signals: list[Signal] = Field(default_factory=list)
    prediction: Prediction | None = None
    score: float | None = None
    progress: float | None = None
    latency_s: float = 0.0
    tokens: int = 0
    cached: bool = False
    p_failure: float | None = None
    predictions: int = 0
    threshold: float | None = None
    uncertain: bool = False
    error: str | None = None
    error_type: str | None = None
    exception: BaseException | None = Field(default=None, exclude=True, repr=False)
    index: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Decision):
            return NotImplemented
        return _without_exception(self) == _without_exception(other)

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, as before

    @property
    def executes(self) -> bool:
        """True when the action should run for real."""
        return self.kind is not DecisionKind.VETO

    @property
    def predicted_observation(self) -> str | None:
        return self.prediction.observation if self.prediction else None

    @property
    def destructive_effect(self) -> str | None:
        """What an action-level judge found the action destroys or overwrites, or ``None``."""
        for signal in self.signals:
            if signal.source == "action":
                return signal.detail or signal.name
        return None

    def confidence_text(self) -> str:
        """``p_failure`` in words, e.g. ``p_failure 0.75: 3 of 4 predictions fail``; ``""``
        when it says nothing the verdict does not: no judged prediction, or one plain
        prediction (``p_failure`` exactly 0 or 1)."""
        if self.p_failure is None or not self.predictions:
            return ""
        if self.predictions == 1 and self.p_failure in (0.0, 1.0):
            return ""
        if self.predictions == 1:
            text = f"p_failure {self.p_failure:.2f}"
        else:
            failing = round(self.p_failure * self.predictions)
            text = (
                f"p_failure {self.p_failure:.2f}: {failing} of {self.predictions} predictions fail"
            )
        if self.threshold is not None:
            text += f"; veto threshold {self.threshold:.2f}"
        return text

    def explain(self) -> str:
        """A message an agent can act on: what was predicted, why it was blocked, what to do.

        It never contradicts itself: a veto shows a prediction that fails (the
        one its reason reads), an action that runs is never shown with a
        failing prediction as its expected result.
        """
        act = action_text(self.action)
        confidence = self.confidence_text()
        if self.kind is DecisionKind.VETO:
            basis = veto_basis(self)
            lines = [f"[lookahead] Blocked before execution: {act}"]
            why = f"Why: {self.reason or self.outcome.value}"
            if basis in ("observed", "action"):  # lead with what decided
                lines.append(why)
            if self.prediction is not None:
                lines.append(f"Predicted result:\n{self.prediction.observation.strip()[:1500]}")
            if basis not in ("observed", "action"):
                lines.append(why)
            if confidence:
                lines.append(f"Confidence: {confidence}")
            evidence = [s for s in self.signals if s.matched]
            if evidence:
                lines.append(
                    "Evidence: " + "; ".join(f"{s.name}: {s.matched!r}" for s in evidence[:5])
                )
            unchecked = "unchecked" in self.metadata
            lines.append(
                "The action was NOT executed. "
                + (
                    _NEXT_STEP_ERROR
                    if unchecked
                    else _NEXT_STEP_OBSERVED
                    if basis == "observed"
                    else _NEXT_STEP.get(self.outcome, _NEXT_STEP_ERROR)
                )
            )
            return "\n".join(lines)
        if self.kind is DecisionKind.UNSIMULATED:
            return f"[lookahead] Would run without a prediction ({self.reason}): {act}"
        if self.kind is DecisionKind.SKIPPED:
            return f"[lookahead] Would run without simulation ({self.reason}): {act}"
        if self.uncertain:
            return (
                f"[lookahead] Uncertain ({confidence or f'p_failure {self.p_failure:.2f}'}); "
                f"would execute: {act}\n"
                f"Why it still runs: {self.reason}"
            )
        note = f" ({confidence})" if confidence and self.predictions > 1 else ""
        return f"[lookahead] Predicted {self.outcome.value}{note}; would execute: {act}"


def _without_exception(decision: Decision) -> dict[str, Any]:
    return {k: v for k, v in decision.__dict__.items() if k != "exception"}


class SelectResult(BaseModel):
    """Outcome of :meth:`Lookahead.select`: decisions ranked best first."""

    model_config = ConfigDict(extra="forbid")

    decisions: list[Decision]
    chosen: Decision | None
    pruned: list[Decision] = Field(default_factory=list)
    reason: str = ""


class RolloutResult(BaseModel):
    """Outcome of :meth:`Lookahead.rollout`: the simulated steps of a plan."""

    model_config = ConfigDict(extra="forbid")

    steps: list[Decision]
    failed_at: int | None = None  # 0-based index into the plan of the first predicted failure
    reason: str = ""
    trajectory: Trajectory  # the input trajectory extended with the predicted turns


VetoBasis = Literal["observed", "prediction", "action", "unchecked"]

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

    ``observed``: the environment showed something the action needs missing
    (certain, no prediction involved). ``action``: an action-level rule found
    it destructive, which blocks it whatever the prediction says (fail-safe),
    or only action-level rules decided. ``prediction``: a signal read from the
    predicted observation (a rule or the LLM judge) has the deciding outcome.
    ``unchecked``: nothing was judged (the world model or the judges failed
    and the policy blocks unchecked actions). Accepts a
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
    destructive = False
    for s in signals:
        data = s.model_dump(mode="json") if isinstance(s, Signal) else dict(s)
        source, name = str(data.get("source", "")), str(data.get("name", ""))
        if source == "observed":
            return "observed"
        if source == "action" and str(data.get("outcome")) == Outcome.RISKY.value:
            destructive = True
        if str(data.get("outcome")) == outcome:
            deciding.append((source, name))
    if destructive:
        return "action"
    if any(src in ("rule", "llm") and not _is_action_signal(src, n) for src, n in deciding):
        return "prediction"
    if any(_is_action_signal(src, n) for src, n in deciding):
        return "action"
    return "unchecked"
