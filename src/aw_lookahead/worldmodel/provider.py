"""Where an OpenAI-compatible server lives: base URL, API key and the client.

Kept apart from the request/reply mapping (world model, judges) so every
component that talks to a server resolves its endpoint the same way and an
``AsyncOpenAI`` can be injected (tests, custom transports, shared pools).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from openai import AsyncOpenAI

__all__ = ["DEFAULT_BASE_URL", "OpenAIProvider"]

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"


@dataclass
class OpenAIProvider:
    """A base URL and the ``AsyncOpenAI`` client for it; closes only a client it made."""

    base_url: str
    client: AsyncOpenAI
    owns_client: bool

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
        if client is not None:
            return cls(url, client, owns_client=False)
        key = api_key or os.environ.get(f"{env_prefix}_API_KEY") or "EMPTY"
        return cls(url, AsyncOpenAI(base_url=url, api_key=key, max_retries=max_retries), True)

    async def aclose(self) -> None:
        if self.owns_client:
            await self.client.close()
