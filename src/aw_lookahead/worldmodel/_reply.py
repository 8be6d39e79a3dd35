"""Turning a reply's text into a checked :class:`~aw_lookahead.prompts.ParsedReply`."""

from __future__ import annotations

from aw_lookahead.errors import ReplyParseError
from aw_lookahead.prompts import ParsedReply, parse_reply


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
