"""Run coroutines from synchronous code on one private, long-lived event loop.

Async clients (httpx pools, semaphores) bind to the loop that first uses them,
so every sync wrapper in the package shares one loop in a daemon thread
instead of calling ``asyncio.run`` per call. Works from inside a running loop
too (e.g. a notebook), since the work never runs on the caller's loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_state: dict[str, asyncio.AbstractEventLoop] = {}


def _background_loop() -> asyncio.AbstractEventLoop:
    with _lock:
        loop = _state.get("loop")
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="aw-lookahead-sync", daemon=True
            )
            thread.start()
            _state["loop"] = loop
        return loop


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Start ``coro`` on the shared background loop; the caller waits on (or cancels) the future."""
    return asyncio.run_coroutine_threadsafe(coro, _background_loop())


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` on the shared background loop and wait for its result."""
    return submit(coro).result(timeout)
