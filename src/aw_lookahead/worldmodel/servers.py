"""What a server offers beyond the OpenAI chat API, said explicitly per kind of server.

:class:`~aw_lookahead.worldmodel.OpenAIWorldModel` speaks only
``/v1/chat/completions`` and ``/v1/models``, which every OpenAI-compatible
server has. Three facts it uses to do better differ between servers and are
not in that API: the context length (to trim a long history before the
server refuses it), a token counter (to trim exactly), and how many samples
one request may ask for (``n``). A :class:`ServerKind` answers those three
for one kind of server; nothing is probed by guessing.

* ``openai`` (the default; vLLM, SGLang, Ollama, LM Studio, hosted APIs): the
  context length from ``/v1/models``' ``max_model_len`` where the server
  lists it (vLLM does), tokens from vLLM's ``POST /tokenize`` with
  ``messages`` where it exists, ``n`` unbounded. A server without these gets
  no trimming ahead of time; a "context too long" refusal still trims.
* ``llama.cpp`` (``llama-server``): the context of one request from
  ``GET /props`` (``default_generation_settings.n_ctx``), tokens by rendering
  the chat template (``POST /apply-template``) and tokenizing the result
  (``POST /tokenize``), ``n`` at most its ``total_slots`` (``--parallel``):
  a larger draw is split into requests of that size (their shared prompt is
  reused from its prompt cache).

The kind comes from ``OpenAIWorldModel(server=...)``, else ``$AW_LOOKAHEAD_SERVER``
(``aw-lookahead serve --gguf`` prints it), else ``openai``.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx
import openai
from openai import AsyncOpenAI

from aw_lookahead.endpoint import ENV_PREFIX, ModelInfo
from aw_lookahead.errors import ConfigError
from aw_lookahead.redact import redact_messages_off_loop

from ._context import count_tokens

__all__ = [
    "ENV_SERVER",
    "SERVER_KINDS",
    "LlamaCppServer",
    "OpenAICompatibleServer",
    "ServerKind",
    "ServerLimits",
    "server_kind",
]

ENV_SERVER = f"{ENV_PREFIX}_SERVER"
"""The kind of server ``OpenAIWorldModel`` talks to when ``server=`` is not given."""

_LOOKUP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ServerLimits:
    """What a served model allows one request: its context (tokens) and samples (``n``);
    ``None`` where the server does not say."""

    context_tokens: int | None = None
    max_samples: int | None = None


class ServerKind(ABC):
    """The facts one kind of OpenAI-compatible server offers beyond the chat API."""

    name: ClassVar[str]

    @abstractmethod
    async def limits(
        self, client: AsyncOpenAI, base_url: str, listed: ModelInfo, *, request_timeout: float
    ) -> ServerLimits:
        """The served model's limits; ``listed`` is its ``/v1/models`` entry."""

    @abstractmethod
    async def count_tokens(
        self,
        client: AsyncOpenAI,
        base_url: str,
        model: str,
        messages: list[dict[str, str]],
        *,
        request_timeout: float,
    ) -> int | None:
        """The prompt tokens of ``messages`` (redacted first); ``None`` where it cannot tell."""

    def __repr__(self) -> str:
        return f"<server kind {self.name}>"


class OpenAICompatibleServer(ServerKind):
    """Any OpenAI-compatible server, with vLLM's extras used where they are present."""

    name = "openai"

    async def limits(
        self, client: AsyncOpenAI, base_url: str, listed: ModelInfo, *, request_timeout: float
    ) -> ServerLimits:
        return ServerLimits(context_tokens=listed.max_model_len)

    async def count_tokens(
        self,
        client: AsyncOpenAI,
        base_url: str,
        model: str,
        messages: list[dict[str, str]],
        *,
        request_timeout: float,
    ) -> int | None:
        return await count_tokens(
            client, base_url, model, messages, request_timeout=request_timeout
        )


async def _call(
    client: AsyncOpenAI, url: str, body: dict[str, Any] | None, request_timeout: float
) -> dict[str, Any] | None:
    """A JSON object from ``url`` (POST with ``body``, GET without); ``None`` on any failure."""
    options: Any = {"timeout": min(request_timeout, _LOOKUP_TIMEOUT_S)}
    try:
        if body is None:
            resp = await client.get(url, cast_to=httpx.Response, options=options)
        else:
            resp = await client.post(url, body=body, cast_to=httpx.Response, options=options)
        data = resp.json()
    except (openai.OpenAIError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class LlamaCppServer(ServerKind):
    """llama.cpp's ``llama-server``: ``/props``, ``/apply-template`` and ``/tokenize``."""

    name = "llama.cpp"

    async def limits(
        self, client: AsyncOpenAI, base_url: str, listed: ModelInfo, *, request_timeout: float
    ) -> ServerLimits:
        props = await _call(client, f"{base_url.removesuffix('/v1')}/props", None, request_timeout)
        if props is None:
            return ServerLimits()
        settings = props.get("default_generation_settings")
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        slots = props.get("total_slots")
        return ServerLimits(
            context_tokens=n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None,
            max_samples=slots if isinstance(slots, int) and slots > 0 else None,
        )

    async def count_tokens(
        self,
        client: AsyncOpenAI,
        base_url: str,
        model: str,
        messages: list[dict[str, str]],
        *,
        request_timeout: float,
    ) -> int | None:
        root = base_url.removesuffix("/v1")
        body = {"messages": await redact_messages_off_loop(messages)}
        rendered = await _call(client, f"{root}/apply-template", body, request_timeout)
        prompt = rendered.get("prompt") if rendered is not None else None
        if not isinstance(prompt, str):
            return None
        tokens = await _call(
            client,
            f"{root}/tokenize",
            {"content": prompt, "add_special": True, "parse_special": True},
            request_timeout,
        )
        ids = tokens.get("tokens") if tokens is not None else None
        return len(ids) if isinstance(ids, list) else None


SERVER_KINDS: dict[str, ServerKind] = {
    "openai": OpenAICompatibleServer(),
    "vllm": OpenAICompatibleServer(),
    "llama.cpp": LlamaCppServer(),
}
"""The kinds by name (``vllm`` is ``openai``: vLLM's extras are what that kind uses)."""


def server_kind(kind: str | ServerKind | None = None) -> ServerKind:
    """``kind`` itself, the kind it names, else ``$AW_LOOKAHEAD_SERVER``'s, else ``openai``."""
    if isinstance(kind, ServerKind):
        return kind
    origin = "server"
    if kind is None:
        origin, kind = ENV_SERVER, os.environ.get(ENV_SERVER, "").strip() or "openai"
    found = SERVER_KINDS.get(kind.strip().lower().replace("llamacpp", "llama.cpp"))
    if found is None:
        raise ConfigError(
            f"{origin}={kind!r} is not a kind of server this client knows; choose one of "
            f"{sorted(SERVER_KINDS)} (openai fits any OpenAI-compatible server)"
        )
    return found
