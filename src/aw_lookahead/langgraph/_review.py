"""Asking a person about vetoed calls, in the format of LangChain's ``HumanInTheLoopMiddleware``.

``on_veto="interrupt"`` raises ``interrupt()`` with a :func:`review_request`:
an ``HITLRequest`` (``action_requests`` + ``review_configs``), so UIs built for
``HumanInTheLoopMiddleware`` show it unchanged. Each action request also
carries ``aw_lookahead``: the prediction, outcome, reason, ``p_failure`` and,
whenever an action-level judge finds one, the destructive effect. The
description names a destructive effect first, whatever was predicted: a
reviewer told only "predicted to fail: a path does not exist" may approve an
``rm -rf``.

:func:`read_review` accepts what such a UI sends back (``{"decisions": [...]}``
with one decision per action request, or one decision alone) and the short
forms ``"approve"`` / ``"reject"`` / ``True`` / ``False``, which apply to every
call of the request. Decisions: ``approve`` runs the call as it is, ``edit``
runs ``edited_action["args"]`` instead (same tool), ``reject`` returns the veto
with the person's message, ``respond`` answers the call with the person's
message without running it. Any other answer is never taken as a reject:
:func:`read_review` raises :class:`~aw_lookahead.errors.UsageError`, and
:func:`ask_person` logs it and asks again with the request plus ``error`` (the
reason in words), so the thread stays answerable and nothing runs meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import ToolMessage
from langgraph.types import interrupt

from aw_lookahead.errors import UsageError
from aw_lookahead.lookahead import Decision

from ._gate import veto_message, with_note

__all__ = [
    "ALLOWED_DECISIONS",
    "Review",
    "answer_instead",
    "ask_person",
    "read_review",
    "review_request",
]

log = logging.getLogger("aw_lookahead")

ReviewType = Literal["approve", "edit", "reject", "respond"]
ALLOWED_DECISIONS: tuple[ReviewType, ...] = ("approve", "edit", "reject", "respond")

_YES = frozenset({"approve", "approved", "yes", "y"})
_NO = frozenset({"reject", "rejected", "no", "n"})
_ANSWER_HELP = (
    'answer with {"decisions": [{"type": "approve"}]} (one decision per action request; types: '
    'approve, edit with "edited_action": {"name", "args"}, reject with an optional "message", '
    'respond with a "message"), one such decision alone, or "approve" / "reject"'
)


@dataclass(frozen=True)
class Review:
    """A person's decision on one call."""

    type: ReviewType
    message: str = ""
    args: dict[str, Any] = field(default_factory=dict)


def _description(decision: Decision) -> str:
    lines = []
    effect = decision.destructive_effect
    if effect:
        lines.append(f"DESTRUCTIVE: {effect}. Approving runs it for real.")
    lines.append(f"Lookahead blocked this call: {decision.reason or decision.outcome.value}.")
    if decision.predicted_observation:
        lines.append("Predicted result:\n" + decision.predicted_observation.strip()[:1500])
    confidence = decision.confidence_text()
    if confidence:
        lines.append(f"Confidence: {confidence}")
    return "\n".join(lines)


def review_request(pairs: Sequence[tuple[Mapping[str, Any], Decision]]) -> dict[str, Any]:
    """The ``interrupt()`` value for vetoed calls: an ``HITLRequest`` plus our evidence."""
    requests, configs = [], []
    for call, decision in pairs:
        name = str(call.get("name"))
        requests.append(
            {
                "name": name,
                "args": dict(call.get("args") or {}),
                "description": _description(decision),
                "aw_lookahead": {
                    "tool_call_id": call.get("id"),
                    "kind": decision.kind.value,
                    "outcome": decision.outcome.value,
                    "reason": decision.reason,
                    "prediction": decision.predicted_observation,
                    "p_failure": decision.p_failure,
                    "destructive": decision.destructive_effect,
                    "unchecked": "unchecked" in decision.metadata,
                },
            }
        )
        configs.append({"action_name": name, "allowed_decisions": list(ALLOWED_DECISIONS)})
    return {"action_requests": requests, "review_configs": configs}


def _one(answer: Any, call: Mapping[str, Any]) -> Review:
    if isinstance(answer, bool):
        return Review("approve" if answer else "reject")
    if isinstance(answer, str):
        word = answer.strip().lower()
        if word in _YES:
            return Review("approve")
        if word in _NO:
            return Review("reject")
        raise UsageError(f"unknown approval answer {answer!r}: {_ANSWER_HELP}")
    if not isinstance(answer, Mapping):
        raise UsageError(f"unknown approval answer of type {type(answer).__name__}: {_ANSWER_HELP}")
    kind = answer.get("type")
    message = answer.get("message")
    if message is not None and not isinstance(message, str):
        raise UsageError(f"the {kind!r} decision's message must be text, got {message!r}")
    if kind in ("approve", "reject"):
        return Review(kind, message or "")
    if kind == "respond":
        if not message:
            raise UsageError('a "respond" decision needs a "message": the answer the agent sees')
        return Review("respond", message)
    if kind == "edit":
        edited = answer.get("edited_action")
        if not isinstance(edited, Mapping) or not isinstance(edited.get("args"), Mapping):
            raise UsageError(
                'an "edit" decision needs "edited_action": {"name": ..., "args": {...}}'
            )
        name = edited.get("name", call.get("name"))
        if name != call.get("name"):
            raise UsageError(
                f"an edit may change the arguments of {call.get('name')!r}, not call another "
                f"tool ({name!r}): reject it and ask the agent for that call instead"
            )
        return Review("edit", message or "", dict(edited["args"]))
    raise UsageError(f"unknown approval decision type {kind!r}: {_ANSWER_HELP}")


def read_review(answer: Any, calls: Sequence[Mapping[str, Any]]) -> list[Review]:
    """One :class:`Review` per call of the request, from the value ``interrupt()`` returned."""
    if isinstance(answer, Mapping) and "decisions" in answer:
        decisions = answer["decisions"]
        if not isinstance(decisions, Sequence) or isinstance(decisions, str):
            raise UsageError(f'"decisions" must be a list, got {decisions!r}: {_ANSWER_HELP}')
        if len(decisions) != len(calls):
            raise UsageError(
                f"{len(decisions)} decision(s) answer {len(calls)} reviewed call(s): give one "
                "per action request, in order"
            )
        return [_one(d, c) for d, c in zip(decisions, calls, strict=True)]
    if isinstance(answer, Mapping) and len(calls) > 1:
        raise UsageError(
            f"one decision answers {len(calls)} reviewed calls: send "
            '{"decisions": [...]} with one per action request'
        )
    return [_one(answer, c) for c in calls]


def ask_person(pairs: Sequence[tuple[Mapping[str, Any], Decision]]) -> list[Review]:
    """Ask with ``interrupt()`` until the answer can be read; one :class:`Review` per call.

    An unreadable answer is logged as a WARNING and the same request is raised again
    with ``error`` set: LangGraph keeps earlier resume values, so raising would leave
    the thread answering every later resume with the same unreadable value.
    """
    calls = [call for call, _ in pairs]
    first = review_request(pairs)
    request = first
    while True:
        answer = interrupt(request)
        try:
            return read_review(answer, calls)
        except UsageError as exc:
            log.warning("the answer to a lookahead review was not taken: %s", exc)
            request = {**first, "error": f"the last answer was not taken: {exc}"}


def answer_instead(
    review: Review, call: Mapping[str, Any], decision: Decision
) -> ToolMessage | None:
    """The ToolMessage that answers ``call`` in place of running it, or ``None`` when it runs.

    ``reject``: the veto, with the person's message; ``respond``: the person's message.
    """
    if review.type == "reject":
        veto = veto_message(call, decision)
        return (
            with_note(veto, f"The user rejected it: {review.message}") if review.message else veto
        )
    if review.type == "respond":
        return ToolMessage(
            content=review.message, tool_call_id=str(call["id"]), name=str(call.get("name", ""))
        )
    return None
