"""A LoRA adapter loaded into the one running vLLM test server, for the tests that ask it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx


@contextmanager
def served_lora(server: Any, adapter: Path, prefix: str) -> Iterator[str]:
    """Load ``adapter`` into ``server`` (a ``LocalServer``) under a fresh name; unload it after."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    root = server.base_url.removesuffix("/v1")
    headers = {"Authorization": f"Bearer {server.api_key}"}
    reply = httpx.post(
        f"{root}/v1/load_lora_adapter",
        json={"lora_name": name, "lora_path": str(adapter)},
        headers=headers,
        timeout=120,
        trust_env=False,
    )
    assert reply.status_code == 200, reply.text
    try:
        yield name
    finally:
        httpx.post(
            f"{root}/v1/unload_lora_adapter",
            json={"lora_name": name},
            headers=headers,
            timeout=60,
            trust_env=False,
        )
