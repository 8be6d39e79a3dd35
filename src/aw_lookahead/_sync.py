"""The package's one sync bridge: run coroutines from blocking code on a loop in a daemon thread.

Async clients (httpx pools, semaphores, subprocess pipes) bind to the loop that
first uses them, so blocking wrappers must not call ``asyncio.run`` per call.
A :class:`LoopThread` keeps one event loop running in a daemon thread and runs
submitted coroutines there; it works from plain scripts and from code that
already runs an event loop (a notebook), since the work never runs on the
caller's loop.

* :func:`run_sync` / :func:`submit` use one shared, lazily started loop; every
  sync wrapper of the engine, world models and adapters goes through them.
* What owns resources which must die with it (a ``TerminalSandbox`` in
  blocking use) creates its own :class:`LoopThread` and closes it;
  :func:`run_on_own_loop` does that for one call, and :func:`own_loop_twin`
  makes the blocking ``*_sync`` twin of an async function that way.

Guarantees: waiting on a loop from that loop's own thread raises
:class:`~aw_lookahead.errors.UsageError` instead of hanging, and a coroutine
refused (closed loop, wrong thread) is closed, never left un-awaited.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

from .errors import UsageError

__all__ = ["LoopThread", "own_loop_twin", "run_on_own_loop", "run_sync", "submit"]

T = TypeVar("T")
P = ParamSpec("P")


class LoopThread:
    """An event loop running forever in a daemon thread, fed from other threads."""

    def __init__(self, name: str = "aw-lookahead-sync") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    @property
    def closed(self) -> bool:
        return self.loop.is_closed()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Schedule ``coro`` on the loop; the caller may wait on the returned future."""
        if self.loop.is_closed():
            coro.close()
            raise UsageError(f"the event loop of {self._thread.name!r} is closed; make a new one")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result (or ``timeout`` seconds)."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise UsageError(
                "a blocking call was made from inside its own event loop thread and would wait "
                "for itself; await the async method instead"
            )
        return self.submit(coro).result(timeout)

    def close(self) -> None:
        """Cancel what still runs, shut down async generators and the default executor (as
        ``asyncio.run`` does), stop the loop, join the thread. Idempotent."""
        if self.loop.is_closed():
            return
        if threading.current_thread() is self._thread:
            raise UsageError("a LoopThread cannot be closed from its own thread")
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result()
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()
            self.loop.close()

    async def _shutdown(self) -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.loop.shutdown_asyncgens()
        await self.loop.shutdown_default_executor()

    def __enter__(self) -> LoopThread:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


_lock = threading.Lock()
_shared: list[LoopThread] = []


def _shared_loop() -> LoopThread:
    with _lock:
        if not _shared or _shared[0].closed:
            _shared[:] = [LoopThread()]
        return _shared[0]


def submit(coro: Coroutine[Any, Any, T]) -> Future[T]:
    """Schedule ``coro`` on the shared background loop and return its concurrent future."""
    return _shared_loop().submit(coro)


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` on the shared background loop and wait for its result."""
    return _shared_loop().run(coro, timeout)


def run_on_own_loop(coro: Coroutine[Any, Any, T], name: str) -> T:
    """Run ``coro`` on a fresh :class:`LoopThread` and close it before returning.

    For one-off blocking calls (recording, data generation) whose subprocesses,
    tasks and worker threads must not outlive the call: as with ``asyncio.run``,
    whatever is left is cancelled and the default executor shut down. Unlike
    ``asyncio.run`` it also works while the caller's thread runs an event loop.
    """
    try:
        loop = LoopThread(name)
    except BaseException:
        coro.close()
        raise
    with loop:
        return loop.run(coro)


def own_loop_twin(fn: Callable[P, Coroutine[Any, Any, T]], loop_name: str) -> Callable[P, T]:
    """The blocking twin ``<name>_sync`` of the async function ``fn``, with its parameters:
    each call runs ``fn`` with :func:`run_on_own_loop` on a loop named ``loop_name``."""

    @functools.wraps(fn)
    def blocking(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_on_own_loop(fn(*args, **kwargs), loop_name)

    blocking.__name__ = f"{fn.__name__}_sync"
    blocking.__qualname__ = f"{fn.__qualname__}_sync"
    blocking.__doc__ = (
        f"Blocking :func:`{fn.__name__}`, same arguments; safe to call while an event loop "
        "runs. It runs on a loop of its own, closed (as ``asyncio.run`` does) before it returns."
    )
    return blocking
