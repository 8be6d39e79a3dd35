"""How a chat endpoint's failures become our errors: the one mapping table and the reply cap.

Kept apart from :mod:`aw_lookahead.endpoint`, which re-exports every public name here, so
that where a server lives and how we talk to it (the provider) reads apart from what
can go wrong with its replies: :func:`map_error` maps every ``openai`` failure to a
:class:`~aw_lookahead.errors.WorldModelError`, and :data:`MAX_REPLY_BYTES` (enforced
by the response hook :func:`_cap_reply`) bounds what a reply may cost to read.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from functools import cache
from typing import Any

import openai

from aw_lookahead.errors import (
    ContextTooLongError,
    ModelNotServedError,
    ServerError,
    ServerUnreachableError,
    WorldModelError,
    WorldModelTimeoutError,
)

__all__ = [
    "MAX_REPLY_BYTES",
    "context_too_long",
    "is_context_error",
    "is_shared_context_full",
    "map_error",
]

MAX_REPLY_BYTES = 16 * 2**20
"""The largest HTTP reply body read from a model server; a larger one is a ``ServerError``.

A world-model or judge reply is a few KiB (hundreds of tokens, ``n`` samples,
log-probabilities); a broken or hostile server could otherwise make the client
buffer, parse and cache any amount (a 50 MiB reply took 633 MB of memory).
"""


class _ReplyTooLarge(openai.OpenAIError):
    """An OpenAIError, so the SDK raises it as it is: neither retried nor wrapped."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the reply is larger than {limit} bytes")
        self.limit = limit


@cache
def _capped_stream_class(base: type[Any]) -> type[Any]:
    """A byte stream of ``base``'s library (the OpenAI SDK brings its own httpx) that stops
    past :data:`MAX_REPLY_BYTES`."""

    class CappedStream(base):  # type: ignore[misc]
        def __init__(self, inner: Any, limit: int) -> None:
            self._inner, self._limit = inner, limit

        async def __aiter__(self) -> AsyncIterator[bytes]:
            total = 0
            async for chunk in self._inner:
                total += len(chunk)
                if total > self._limit:
                    raise _ReplyTooLarge(self._limit)
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    return CappedStream


async def _cap_reply(response: Any) -> None:
    """Response hook (before the body is read): refuse or meter an oversized body."""
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_REPLY_BYTES:
        raise _ReplyTooLarge(MAX_REPLY_BYTES)
    stream = response.stream
    base = next((c for c in type(stream).__mro__ if c.__name__ == "AsyncByteStream"), None)
    if base is None:
        raise RuntimeError(f"unexpected HTTP response stream {type(stream).__name__}")
    response.stream = _capped_stream_class(base)(stream, MAX_REPLY_BYTES)


# vLLM: "maximum context length is 4096 ... requested 5000"; llama.cpp: "request (5000
# tokens) exceeds the available context size (4096 tokens)".
_CONTEXT_RE = re.compile(r"(?:maximum context length is|context size \()\s*(\d+)", re.IGNORECASE)
_PROMPT_TOKENS_RE = re.compile(
    r"(?:contains at least|requested|value=|(?:request|input) \()\s*(\d+)", re.IGNORECASE
)


def is_context_error(exc: openai.BadRequestError) -> bool:
    """True when a 400 reply says the prompt does not fit the context."""
    text = str(exc).lower()
    return any(
        words in text
        for words in ("context length", "too long", "maximum model length", "context size")
    )


def is_shared_context_full(exc: Exception) -> bool:
    """True when llama.cpp refused because the requests in flight together outgrew its context.

    Its slots share one KV buffer (``--kv-unified``): when unrelated prompts running at
    once overflow it, llama-server answers 500 "Context size has been exceeded." to every
    request in flight and clears them; each would have fit alone, so a retry can succeed.
    """
    return isinstance(exc, openai.InternalServerError) and (
        "context size has been exceeded" in str(exc).lower()
    )


def context_too_long(exc: openai.BadRequestError) -> ContextTooLongError:
    """The :class:`ContextTooLongError` for a server's refusal, with the sizes it names."""
    limit = _CONTEXT_RE.search(str(exc))
    asked = _PROMPT_TOKENS_RE.search(str(exc))
    return ContextTooLongError(
        int(asked.group(1)) if asked else None,
        int(limit.group(1)) if limit else None,
        detail=f"Server said: {exc.message}. ",
    )


def map_error(
    exc: Exception, *, base_url: str, timeout: float, model: str | None = None
) -> WorldModelError:
    """The one table from an ``openai`` (or JSON-decoding) failure to our error type.

    ================================== =========================================
    failure                            becomes
    ================================== =========================================
    ``APITimeoutError``                ``WorldModelTimeoutError`` (``timeout``)
    ``APIConnectionError``             ``ServerUnreachableError`` (with the cause)
    400 saying the prompt is too long  ``ContextTooLongError`` (sizes it names)
    llama.cpp's shared context full    ``ServerError`` saying what to change
    404 naming ``model`` (when given)  ``ModelNotServedError`` (served list empty)
    any other HTTP status              ``ServerError`` with the status
    ``ValueError`` (reply not JSON)    ``ServerError``: not an API root
    a reply past ``MAX_REPLY_BYTES``   ``ServerError``, read no further
    anything else                      ``ServerError`` without a status
    ================================== =========================================

    :meth:`OpenAIProvider.chat` fills the served list of a
    ``ModelNotServedError`` from ``/v1/models``.
    """
    if isinstance(exc, openai.APITimeoutError):
        return WorldModelTimeoutError(base_url, timeout)
    if isinstance(exc, _ReplyTooLarge):
        return ServerError(
            base_url,
            None,
            f"{exc}, more than any model reply needs; the server at this URL is "
            "not answering as an OpenAI-compatible API should",
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        detail = f"{type(cause).__name__}: {cause}" if cause else str(exc)
        return ServerUnreachableError(base_url, detail)
    if isinstance(exc, openai.BadRequestError) and is_context_error(exc):
        return context_too_long(exc)
    if model is not None and isinstance(exc, openai.NotFoundError) and "model" in str(exc).lower():
        return ModelNotServedError(model, [], base_url)
    if is_shared_context_full(exc):
        return ServerError(
            base_url,
            500,
            "the requests in flight together outgrew the context its slots share "
            "(llama.cpp's --kv-unified), and sending this one again in turn met the same; "
            "serve with a larger --ctx-size, or send fewer requests at once "
            "(e.g. --concurrency 1)",
        )
    if isinstance(exc, openai.APIStatusError):
        return ServerError(base_url, exc.status_code, exc.message)
    if isinstance(exc, ValueError):
        return ServerError(
            base_url,
            None,
            f"the reply is not the JSON of an OpenAI-compatible API ({type(exc).__name__}: "
            f"{str(exc)[:200]}); check that --base-url points at the server's /v1 root",
        )
    return ServerError(base_url, None, f"{type(exc).__name__}: {exc}")
