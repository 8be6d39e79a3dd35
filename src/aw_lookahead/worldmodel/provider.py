"""Where an OpenAI-compatible server lives: base URL, API key and the client.

Kept apart from the request/reply mapping (world model, judges) so every
component that talks to a server resolves its endpoint the same way and an
``AsyncOpenAI`` can be injected (tests, custom transports, shared pools).

Event loops: an ``AsyncOpenAI`` (its httpx pool) belongs to the event loop
that first used it, and its pooled sockets die with that loop. So the
components open a client per call with :meth:`OpenAIProvider.connect`: it is
made on the running loop and closed before the call returns, which lets one
world model serve successive ``asyncio.run`` calls, several threads'
loops, and the package's background loop (sync wrappers) alike. An injected
``client`` is used as given; keeping it on one loop is then the caller's job.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache

import openai
from openai import AsyncOpenAI

__all__ = ["DEFAULT_BASE_URL", "OpenAIProvider"]

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"

# provider id -> the client of the call in progress in this context (tasks inherit it).
_CONNECTED: ContextVar[dict[int, AsyncOpenAI] | None] = ContextVar("aw_connected", default=None)


@cache
def _ssl_context() -> ssl.SSLContext:
    # Building the default context reads the CA bundle (tens of ms); one per process is enough.
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


@dataclass
class OpenAIProvider:
    """A base URL, its key, and the ``AsyncOpenAI`` clients for it.

    ``injected`` is a caller's client (never closed here). Otherwise
    :meth:`connect` makes one client per call on the running loop; the
    :attr:`client` property outside :meth:`connect` returns one long-lived
    client for callers that stay on one loop.
    """

    base_url: str
    api_key: str
    injected: AsyncOpenAI | None = None
    max_retries: int = 0
    _shared: AsyncOpenAI | None = field(default=None, repr=False)

    @property
    def owns_client(self) -> bool:
        return self.injected is None

    @classmethod
    def resolve(
        cls,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        env_prefix: str = "AW_LOOKAHEAD",
        max_retries: int = 0,
    ) -> OpenAIProvider:
        """Explicit arguments first, then ``<env_prefix>_BASE_URL`` / ``_API_KEY``.

        A local server accepts any key, so a placeholder is used when none is set.
        """
        url = (
            base_url
            or (str(client.base_url) if client is not None else None)
            or os.environ.get(f"{env_prefix}_BASE_URL")
            or DEFAULT_BASE_URL
        ).rstrip("/")
        key = api_key or os.environ.get(f"{env_prefix}_API_KEY") or "EMPTY"
        return cls(url, key, injected=client, max_retries=max_retries)

    def _new_client(self) -> AsyncOpenAI:
        http = openai.DefaultAsyncHttpxClient(verify=_ssl_context())
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
