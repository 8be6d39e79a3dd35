"""Fitting a prompt into the server's context window.

Plain functions used by :class:`~aw_lookahead.worldmodel.openai_api.OpenAIWorldModel`:
one trimming order (:func:`shrink`: oldest turns first, then the tool
descriptions), used to plan the cut before sending (:func:`fit_step`, which
asks the server's token counter (its :class:`~.servers.ServerKind`; vLLM's
``/tokenize`` is :func:`count_tokens`) only when a cheap byte estimate says
the prompt may not fit) and again, a turn at a time, when the server still
refuses the prompt as too long. A server's "context too long" refusal is read by the provider's
error table (:func:`aw_lookahead.endpoint.map_error`). Kept apart from the request/reply
mapping so each stays small; everything the functions need is passed in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx
import openai
from openai import AsyncOpenAI

from aw_lookahead.errors import ContextTooLongError
from aw_lookahead.redact import redact_messages_off_loop
from aw_lookahead.trajectory import Trajectory, action_text

from .base import Step

__all__ = ["Fit", "count_tokens", "fit_step", "shrink"]


async def count_tokens(
    client: AsyncOpenAI,
    base_url: str,
    model: str,
    messages: list[dict[str, str]],
    *,
    request_timeout: float,
) -> int | None:
    """Prompt tokens via vLLM's ``/tokenize``; ``None`` where the server lacks it."""
    root = base_url.removesuffix("/v1")
    try:
        resp = await client.post(
            f"{root}/tokenize",
            body={"model": model, "messages": await redact_messages_off_loop(messages)},
            cast_to=httpx.Response,
            options={"timeout": min(request_timeout, 10.0)},
        )
        data = resp.json()
    except (openai.OpenAIError, ValueError):
        return None
    count = data.get("count") if isinstance(data, dict) else None
    return count if isinstance(count, int) else None


@dataclass(frozen=True)
class Fit:
    """How a step's rendering is cut to fit the context: ``skip`` old turns dropped (the
    first turn, task and initial state, always stays), tool descriptions shortened when
    ``brief``."""

    skip: int = 0
    brief: bool = False


def shrink(trajectory: Trajectory, fit: Fit, excess_bytes: float = 0.0) -> Fit | None:
    """The next smaller cut than ``fit``: the oldest turns after the first dropped until
    they hold ``excess_bytes`` (at least one turn); when no droppable turn is left, the
    tool descriptions shortened; ``None`` when nothing is left to cut.

    The one trimming order, used to plan (:func:`fit_step`) and when the server
    still says "context too long" (one more turn each time).
    """
    last = len(trajectory.turns) - 1
    if fit.skip < last:
        skip, dropped = fit.skip, 0.0
        while skip < last and (skip == fit.skip or dropped < excess_bytes):
            turn = trajectory.turns[skip + 1]
            dropped += len(action_text(turn.action).encode()) + len(turn.observation.encode())
            dropped += len((turn.prompt or "").encode()) + len((turn.response or "").encode())
            skip += 1
        return Fit(skip, fit.brief)
    if not fit.brief and trajectory.tools:
        return Fit(fit.skip, True)
    return None


async def fit_step(
    step: Step,
    *,
    count: Callable[[list[dict[str, str]]], Awaitable[int | None]],
    max_model_len: int | None,
    max_tokens: int,
) -> Fit:
    """The cut that fits the step's longest request into the context before it is sent.

    Sized from the step's own rendering (a trimmed rendering is made, once for
    the whole step, only when the untrimmed one may not fit); cut by
    :func:`shrink`. ``count`` gives a rendering's prompt tokens, asked only
    when a cheap byte estimate says it may not fit (``None``: the server cannot
    tell, and nothing is cut ahead). Raises
    :class:`~aw_lookahead.errors.ContextTooLongError` when nothing left to cut fits.
    """
    fit = Fit()
    if max_model_len is None:
        return fit
    budget = max_model_len - max_tokens
    for _ in range(10):
        rendered = step.fit(fit.skip, fit.brief)
        longest = max(range(len(step.actions)), key=rendered.size_bytes)
        size = rendered.size_bytes(longest)
        if size < budget:
            return fit
        tokens = await count(rendered.messages(longest))
        if tokens is None or tokens <= budget:
            return fit
        smaller = shrink(step.trajectory, fit, (tokens - budget) * size / tokens * 1.1)
        if smaller is None:
            raise ContextTooLongError(tokens, budget)
        fit = smaller
    return fit
