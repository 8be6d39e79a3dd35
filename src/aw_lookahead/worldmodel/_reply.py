"""Turning a reply's text into a checked :class:`~aw_lookahead.worldmodel.Prediction`.

Shared by every backend, so what counts as unusable and what counts as
truncated is decided in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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


def completions_prediction(
    completions: Sequence[Any],
    action: Action,
    *,
    strict: bool,
    model: str,
    latency_s: float,
    trimmed_turns: int,
) -> Prediction:
    """The prediction in the chat completions of one action's request(s): the first
    choice is the prediction, the usable others its ``samples``; the token counts
    added up and the first choice's log-probabilities kept in ``metadata``."""
    choices = [c for completion in completions for c in completion.choices]
    if not choices:
        raise ReplyParseError("the server returned no choices", raw="")
    choice = choices[0]
    prediction = reply_prediction(
        action,
        choice.message.content or "",
        _reasoning(choice),
        strict=strict,
        model=model,
        usage=completions_usage(completions),
        latency_s=latency_s,
        finish_reason=choice.finish_reason,
        trimmed_turns=trimmed_turns,
    )
    update: dict[str, Any] = {}
    samples = [s for c in choices[1:] if (s := _sample_text(c, strict)) is not None]
    if samples:
        update["samples"] = samples
    token_logprobs = choice_logprobs(choice)
    if token_logprobs:
        update["metadata"] = {**prediction.metadata, **token_logprobs}
    return prediction.model_copy(update=update) if update else prediction


def _reasoning(choice: Any) -> str | None:
    extra = choice.message.model_extra or {}
    reasoning = extra.get("reasoning") or extra.get("reasoning_content")
    return reasoning if isinstance(reasoning, str) else None


def _sample_text(choice: Any, strict: bool) -> str | None:
    """A further choice's observation; ``None`` when it is unusable (it is left out)."""
    try:
        return checked_reply(
            choice.message.content or "", _reasoning(choice), strict=strict
        ).observation
    except ReplyParseError:
        return None


def completions_usage(completions: Sequence[Any]) -> Usage:
    """The token counts of the replies to one prediction's requests, added up.

    ``cached_tokens`` stays ``None`` when no reply reports it (a server that
    does not say is not a server that cached nothing).
    """
    usage = Usage()
    for completion in completions:
        if completion.usage is None:
            continue
        details = completion.usage.prompt_tokens_details
        cached = details.cached_tokens if details is not None else None
        usage = Usage(
            prompt_tokens=usage.prompt_tokens + (completion.usage.prompt_tokens or 0),
            completion_tokens=usage.completion_tokens + (completion.usage.completion_tokens or 0),
            cached_tokens=cached
            if usage.cached_tokens is None
            else usage.cached_tokens + (cached or 0),
        )
    return usage


def choice_logprobs(choice: Any) -> dict[str, Any]:
    """A chat choice's token log-probabilities, as ``Prediction.metadata`` keeps them
    (``token_logprobs``: ``[token, logprob]`` per output token; ``token_top_logprobs``:
    the alternatives at each position); empty when the reply has none."""
    content = getattr(choice.logprobs, "content", None) if choice.logprobs else None
    if not content:
        return {}
    return {
        "token_logprobs": [[t.token, t.logprob] for t in content],
        "token_top_logprobs": [
            [[a.token, a.logprob] for a in (t.top_logprobs or [])] for t in content
        ],
    }
