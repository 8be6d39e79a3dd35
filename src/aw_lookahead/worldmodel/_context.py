"""Fitting a prompt into the server's context window.

Plain functions used by :class:`~aw_lookahead.worldmodel.openai_api.OpenAIWorldModel`:
planning how many old turns to drop before sending (:func:`plan_skip`, which
asks the server's token counter (its :class:`~.servers.ServerKind`; vLLM's
``/tokenize`` is :func:`count_tokens`) only when a cheap byte estimate says
the prompt may not fit). A server's "context too long" refusal is read by the provider's
error table (:func:`aw_lookahead.endpoint.map_error`). Kept apart from the request/reply
mapping so each stays small; everything the functions need is passed in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
import openai
from openai import AsyncOpenAI

from aw_lookahead.errors import ContextTooLongError
from aw_lookahead.redact import redact_messages_off_loop
from aw_lookahead.trajectory import action_text

from .base import Step

__all__ = ["count_tokens", "plan_skip"]


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


async def plan_skip(
    step: Step,
    *,
    count: Callable[[list[dict[str, str]]], Awaitable[int | None]],
    max_model_len: int | None,
    max_tokens: int,
) -> tuple[int, bool]:
    """How many old turns to drop, and whether to shorten tool descriptions, to fit the context.

    Sized on the step's longest request, from the step's own rendering (a
    trimmed rendering is made, once for the whole step, only when the
    untrimmed one may not fit). History goes first (oldest turns after the
    first); tool definitions are kept, since they ride with the turns that
    use them, and only when no droppable turn is left are their descriptions
    shortened (``brief``). ``count`` gives a rendering's prompt tokens
    (``None``: the server cannot tell, and nothing is trimmed ahead).
    """
    if max_model_len is None:
        return 0, False
    trajectory = step.trajectory
    budget = max_model_len - max_tokens
    skip, brief = 0, False
    for _ in range(10):
        rendered = step.fit(skip, brief)
        longest = max(range(len(step.actions)), key=rendered.size_bytes)
        size = rendered.size_bytes(longest)
        if size < budget:
            return skip, brief
        messages = rendered.messages(longest)
        tokens = await count(messages)
        if tokens is None or tokens <= budget:
            return skip, brief
        remaining = len(trajectory.turns) - 1 - skip
        if remaining <= 0:
            if brief:
                raise ContextTooLongError(tokens, budget)
            brief = True
            continue
        excess_bytes = (tokens - budget) * size / tokens * 1.1
        dropped = 0
        while skip < len(trajectory.turns) - 1 and dropped < excess_bytes:
            turn = trajectory.turns[skip + 1]
            dropped += len(action_text(turn.action).encode()) + len(turn.observation.encode())
            dropped += len((turn.prompt or "").encode()) + len((turn.response or "").encode())
            skip += 1
    return skip, brief
