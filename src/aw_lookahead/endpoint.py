"""The one OpenAI-compatible chat endpoint layer: where a server lives and how we talk to it.

Not a world model of its own: every client of a chat endpoint stands on it.
Everything the world model
(:class:`~aw_lookahead.worldmodel.OpenAIWorldModel`), the
engine's :class:`~aw_lookahead.lookahead.LLMJudge` and the evaluation judges
(:class:`~aw_lookahead.evaluation.RubricJudge`,
:class:`~aw_lookahead.evaluation.ReferenceJudge`, the ``official`` protocol)
share lives here, once:

* the environment variables and their defaults (:data:`ENV_BASE_URL`,
  :data:`ENV_API_KEY`, :data:`ENV_MODEL`; judges read the same names under
  :data:`JUDGE_ENV_PREFIX`), resolved by :meth:`OpenAIProvider.resolve`;
* client construction (an ``AsyncOpenAI`` can be injected: tests, custom
  transports, shared pools);
* the request body's thinking switch (:func:`request_body`) and timeout;
* :meth:`OpenAIProvider.chat`, the request call: messages are redacted just
  before they are sent, and every failure leaves it as one of
  :mod:`aw_lookahead.errors`' ``WorldModelError``s through the one mapping
  table, :func:`map_error` (it lives, with the reply cap :data:`MAX_REPLY_BYTES`,
  in :mod:`aw_lookahead._endpoint_errors`; both are re-exported here).

The mapping of requests and replies (prompts, parsing, verdicts) stays with
each component.

Event loops: an ``AsyncOpenAI`` (its httpx pool) belongs to the event loop
that first used it, and its pooled sockets die with that loop. So the
components open a client per call with :meth:`OpenAIProvider.connect`: it is
made on the running loop and closed before the call returns, which lets one
world model serve successive ``asyncio.run`` calls, several threads'
loops, and the package's background loop (sync wrappers) alike. An injected
``client`` is used as given; keeping it on one loop is then the caller's job.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Self

import httpx
import openai
from openai import AsyncOpenAI

from aw_lookahead._endpoint_errors import (
    MAX_REPLY_BYTES,
    _cap_reply,
    context_too_long,
    is_context_error,
    is_shared_context_full,
    map_error,
)
from aw_lookahead.errors import ModelNotServedError, WorldModelError
from aw_lookahead.redact import redact_messages_off_loop

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

__all__ = [
    "DEFAULT_BASE_URL",
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_MODEL",
    "ENV_PREFIX",
    "JUDGE_ENV_BASE_URL",
    "JUDGE_ENV_MODEL",
    "JUDGE_ENV_PREFIX",
    "MAX_REPLY_BYTES",
    "ModelInfo",
    "OpenAIProvider",
    "UsesProvider",
    "context_too_long",
    "is_context_error",
    "map_error",
    "request_body",
    "request_timeout",
]

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
ENV_PREFIX = "AW_LOOKAHEAD"
ENV_BASE_URL = f"{ENV_PREFIX}_BASE_URL"
ENV_API_KEY = f"{ENV_PREFIX}_API_KEY"
ENV_MODEL = f"{ENV_PREFIX}_MODEL"
JUDGE_ENV_PREFIX = f"{ENV_PREFIX}_JUDGE"
JUDGE_ENV_BASE_URL = f"{JUDGE_ENV_PREFIX}_BASE_URL"
JUDGE_ENV_MODEL = f"{JUDGE_ENV_PREFIX}_MODEL"

SHARED_CONTEXT_RETRIES = 4
"""How many times :meth:`OpenAIProvider.chat` sends a request again, one at a time, after
llama.cpp refused it because the requests in flight together outgrew its shared context."""

# provider id -> the client of the call in progress in this context (tasks inherit it).
_CONNECTED: ContextVar[dict[int, AsyncOpenAI] | None] = ContextVar("aw_connected", default=None)


@cache
def _ssl_context() -> ssl.SSLContext:
    # Building the default context reads the CA bundle (tens of ms); one per process is enough.
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def request_timeout(seconds: float) -> httpx.Timeout:
    """``seconds`` for the whole request, at most 5 s of it to connect."""
    return httpx.Timeout(seconds, connect=min(seconds, 5.0))


def request_body(extra_body: dict[str, Any] | None, *, thinking: bool | None) -> dict[str, Any]:
    """The ``extra_body`` of a request: ``extra_body`` with the chat template's
    ``enable_thinking`` set to ``thinking`` (``None`` leaves the server default).

    The caller's dict is not changed; its other ``chat_template_kwargs`` are kept.
    """
    body: dict[str, Any] = dict(extra_body or {})
    if thinking is not None:
        kwargs = dict(body.get("chat_template_kwargs") or {})
        kwargs["enable_thinking"] = thinking
        body["chat_template_kwargs"] = kwargs
    return body


@dataclass(frozen=True)
class ModelInfo:
    """A model the server serves; ``max_model_len``, ``root`` (the weights' folder or
    name) and ``parent`` (for a LoRA adapter: its base) when the server reports them
    (vLLM does)."""

    id: str
    max_model_len: int | None = None
    root: str | None = None
    parent: str | None = None

    def weights(self) -> str:
        """Which weights are served under :attr:`id`, as far as a client can tell; ``""``
        when the server reports no ``root`` (nothing then tells weights apart).

        ``root``, ``parent`` and ``max_model_len``, and when ``root`` is a folder on
        this machine (``serve --local``, a LoRA adapter's folder) a digest of its
        files' names, sizes and modification times: a re-merged or retrained
        folder at the same path differs, at the cost of one ``stat`` per file.
        """
        if not self.root:
            return ""
        files = ""
        with suppress(OSError), os.scandir(self.root) as entries:
            stats = sorted(
                (e.name, st.st_size, st.st_mtime_ns)
                for e in entries
                if e.is_file()
                for st in (e.stat(),)
            )
            files = hashlib.sha256(repr(stats).encode()).hexdigest()[:32]
        return f"root={self.root}|parent={self.parent or ''}|len={self.max_model_len}|files={files}"


@dataclass
class OpenAIProvider:
    """A base URL, its key, the model name if known, and the ``AsyncOpenAI`` clients for it.

    ``injected`` is a caller's client (never closed here). Otherwise
    :meth:`connect` makes one client per call on the running loop; the
    :attr:`client` property outside :meth:`connect` returns one long-lived
    client for callers that stay on one loop.
    """

    base_url: str
    api_key: str
    injected: AsyncOpenAI | None = None
    max_retries: int = 0
    model: str | None = None
    _shared: AsyncOpenAI | None = field(default=None, repr=False)
    _one_at_a_time: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = field(
        default=None, repr=False
    )

    @property
    def owns_client(self) -> bool:
        return self.injected is None

    @classmethod
    def for_judge(
        cls,
        base_url: str | None,
        api_key: str | None,
        client: AsyncOpenAI | None,
        *,
        max_retries: int,
    ) -> OpenAIProvider:
        """:meth:`resolve` for an evaluation judge: its own ``AW_LOOKAHEAD_JUDGE_*`` variables."""
        return cls.resolve(
            base_url=base_url,
            api_key=api_key,
            client=client,
            env_prefix=JUDGE_ENV_PREFIX,
            max_retries=max_retries,
        )

    @classmethod
    def resolve(
        cls,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        model: str | None = None,
        env_prefix: str = ENV_PREFIX,
        max_retries: int = 0,
    ) -> OpenAIProvider:
        """Explicit arguments first, then ``<env_prefix>_BASE_URL`` / ``_API_KEY`` / ``_MODEL``.

        A local server accepts any key, so a placeholder is used when none is set;
        ``model`` stays ``None`` when neither the argument nor the variable gives one.
        """
        url = (
            base_url
            or (str(client.base_url) if client is not None else None)
            or os.environ.get(f"{env_prefix}_BASE_URL")
            or DEFAULT_BASE_URL
        ).rstrip("/")
        key = api_key or os.environ.get(f"{env_prefix}_API_KEY") or "EMPTY"
        name = model or os.environ.get(f"{env_prefix}_MODEL") or None
        return cls(url, key, injected=client, max_retries=max_retries, model=name)

    def _new_client(self) -> AsyncOpenAI:
        http = openai.DefaultAsyncHttpxClient(
            verify=_ssl_context(), event_hooks={"response": [_cap_reply]}
        )
        return AsyncOpenAI(
            base_url=self.base_url,
            api_key=self.api_key,
            max_retries=self.max_retries,
            http_client=http,
        )

    @property
    def client(self) -> AsyncOpenAI:
        """The client to use now: injected, else the one of the :meth:`connect` in progress,
        else a long-lived one (bound to the first loop that uses it)."""
        if self.injected is not None:
            return self.injected
        current = _CONNECTED.get()
        if current is not None and id(self) in current:
            return current[id(self)]
        if self._shared is None:
            self._shared = self._new_client()
        return self._shared

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[AsyncOpenAI]:
        """A client for one call on the running loop, closed when the block ends.

        Nested ``connect`` blocks (and tasks started inside one) share the
        outer block's client.
        """
        current = _CONNECTED.get()
        if self.injected is not None:
            yield self.injected
            return
        if current is not None and id(self) in current:
            yield current[id(self)]
            return
        client = self._new_client()
        token = _CONNECTED.set({**(current or {}), id(self): client})
        try:
            yield client
        finally:
            _CONNECTED.reset(token)
            await client.close()

    async def aclose(self) -> None:
        """Close the long-lived client, if one was made (per-call clients close themselves)."""
        if self._shared is not None:
            shared, self._shared = self._shared, None
            await shared.close()

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        model: str,
        timeout_s: float,
        client: AsyncOpenAI | None = None,
        **kwargs: Any,
    ) -> ChatCompletion:
        """One chat completion: ``messages`` redacted, failures mapped by :func:`map_error`.

        ``client`` defaults to :attr:`client`; ``kwargs`` go to
        ``chat.completions.create`` as they are (sampling, ``extra_body``,
        ``response_format``). Every failure is a ``WorldModelError`` raised
        ``from`` the library's exception. A request llama.cpp refused because the
        requests in flight together outgrew the context its slots share is sent again,
        up to :data:`SHARED_CONTEXT_RETRIES` times, one retry at a time per provider, so
        requests that collided run in turn rather than failing together.
        """
        create: Any = (client or self.client).chat.completions.create  # kwargs are open-ended
        redacted = await redact_messages_off_loop(messages)
        for attempt in range(SHARED_CONTEXT_RETRIES + 1):
            in_turn = self._retry_lock() if attempt else nullcontext()
            try:
                async with in_turn:
                    completion: ChatCompletion = await create(
                        model=model, messages=redacted, timeout=request_timeout(timeout_s), **kwargs
                    )
                return completion
            except (openai.OpenAIError, ValueError) as exc:
                if is_shared_context_full(exc) and attempt < SHARED_CONTEXT_RETRIES:
                    continue
                error = map_error(exc, base_url=self.base_url, timeout=timeout_s, model=model)
                if isinstance(error, ModelNotServedError):
                    try:
                        served = [m.id for m in await self.list_models(timeout_s, client=client)]
                    except WorldModelError:
                        served = []
                    error = ModelNotServedError(model, served, self.base_url)
                raise error from exc
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _retry_lock(self) -> asyncio.Lock:
        """The lock that sends this provider's retries one at a time on the running loop."""
        loop = asyncio.get_running_loop()
        if self._one_at_a_time is None or self._one_at_a_time[0] is not loop:
            self._one_at_a_time = (loop, asyncio.Lock())
        return self._one_at_a_time[1]

    async def list_models(
        self, timeout_s: float, *, client: AsyncOpenAI | None = None
    ) -> list[ModelInfo]:
        """The models the server serves (``GET /v1/models``), failures mapped by :func:`map_error`.

        Waits at most 10 s (or ``timeout_s``, when shorter).
        """
        wait = min(timeout_s, 10.0)
        try:
            page = await (client or self.client).models.list(timeout=wait)
        except (openai.OpenAIError, ValueError) as exc:
            raise map_error(exc, base_url=self.base_url, timeout=wait) from exc
        out = []
        for m in page.data:
            mml = (m.model_extra or {}).get("max_model_len")
            root = (m.model_extra or {}).get("root")
            parent = (m.model_extra or {}).get("parent")
            out.append(
                ModelInfo(
                    id=m.id,
                    max_model_len=mml if isinstance(mml, int) else None,
                    root=root if isinstance(root, str) else None,
                    parent=parent if isinstance(parent, str) else None,
                )
            )
        return out


class UsesProvider:
    """For components that talk through an :class:`OpenAIProvider` (world model, judges):
    ``aclose`` and ``async with`` close the client the provider made (an injected
    client is left open)."""

    provider: OpenAIProvider

    async def aclose(self) -> None:
        await self.provider.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
