"""Turning a reply's text into a checked :class:`~aw_lookahead.worldmodel.Prediction`.

Shared by every backend, so what counts as unusable and what counts as
truncated is decided in one place.
"""

from __future__ import annotations

from aw_lookahead.errors import ReplyParseError
from aw_lookahead.prompts import ParsedReply, parse_reply
from aw_lookahead.trajectory import Action

from .base import Prediction, Usage


def checked_reply(content: str, reasoning: str | None, *, strict: bool) -> ParsedReply:
    """Parse ``content``; raise :class:`ReplyParseError` (raw text kept) when unusable.

    Empty after thinking is always unusable; in ``strict`` mode so is a reply
    without an observation tag or marker.
    """
    parsed = parse_reply(content, reasoning)
    if parsed.method == "empty":
        raise ReplyParseError("the reply holds no observation (empty after thinking)", content)
    if strict and parsed.method == "raw":
        raise ReplyParseError(
            "the reply has no <predicted_observation> block and no "
            "'**Environment Observation:**' marker (strict mode)",
            content,
        )
    return parsed


def reply_prediction(
    action: Action,
    content: str,
    reasoning: str | None,
    *,
    strict: bool,
    model: str,
    usage: Usage,
    latency_s: float,
    finish_reason: str | None,
    trimmed_turns: int = 0,
) -> Prediction:
    """The prediction for one reply; truncated when it hit the token limit or left its
    observation block open."""
    parsed = checked_reply(content, reasoning, strict=strict)
    return Prediction(
        action=action,
        observation=parsed.observation,
        reasoning=parsed.reasoning,
        raw=content,
        model=model,
        usage=usage,
        latency_s=latency_s,
        finish_reason=finish_reason,
        truncated=finish_reason == "length" or parsed.unclosed,
        trimmed_turns=trimmed_turns,
        parse_method=parsed.method,
    )
