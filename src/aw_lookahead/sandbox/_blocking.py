"""Blocking use of :class:`~aw_lookahead.sandbox.TerminalSandbox`: its ``_sync`` methods.

:class:`BlockingTwins` gives the sandbox ``start_sync``, ``run_sync``,
``send_keys_sync``, ``close_sync`` and the ``with`` form. They run the async
methods on a private :class:`~aw_lookahead._sync.LoopThread` (the package's
sync bridge) that the sandbox makes on its first blocking call and closes in
``close_sync``, so the shell's pipes live and die on that one loop.

Guarantees:

* The blocking methods work from plain code and from code that already runs
  an event loop (they block that loop while they wait), and from several
  threads (commands still run one at a time).
* A sandbox is used either with ``await`` or blocking, never both: its shell
  is bound to the loop that started it. A blocking call on a sandbox that
  ``await`` started, or an ``await`` on one in blocking use, raises
  :class:`~aw_lookahead.errors.UsageError` before anything runs.
* After ``close_sync`` (or leaving ``with``) the private loop is closed and
  every further blocking call raises :class:`~aw_lookahead.errors.UsageError`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

from aw_lookahead._sync import LoopThread
from aw_lookahead.errors import UsageError

from ._result import CommandResult

__all__ = ["BlockingTwins"]

T = TypeVar("T")

_MIXED_AWAIT = (
    "this TerminalSandbox is in blocking use (`with`, `*_sync` methods) and its shell belongs "
    "to that use; call the `_sync` methods, or make a separate sandbox for async code"
)
_MIXED_BLOCKING = (
    "this TerminalSandbox was started with `await` and its shell belongs to that event loop; "
    "await its async methods (run, send_keys, close), or make a separate sandbox for "
    "blocking code"
)
_CLOSED = "this TerminalSandbox is closed; create a new one"
_LOOP_LOCK = threading.Lock()


class BlockingTwins:
    """The blocking twins of :class:`TerminalSandbox`'s async methods (see the module docstring).

    ``with TerminalSandbox() as sb:`` starts the shell and closes it on exit;
    inside, ``sb.run_sync(command)`` and ``sb.send_keys_sync(action)`` return
    what ``await sb.run(...)`` / ``await sb.send_keys(...)`` would.
    """

    _blocking_loop: LoopThread | None = None

    if TYPE_CHECKING:
        # What the sandbox provides; declared here for the type checker only.
        @property
        def pid(self) -> int | None: ...

        async def start(self) -> object: ...

        async def run(self, command: str, *, timeout: float = 10.0) -> CommandResult: ...  # noqa: ASYNC109

        async def send_keys(self, action: object, *, timeout: float = 10.0) -> CommandResult: ...  # noqa: ASYNC109

        async def close(self) -> None: ...

    def _call_blocking(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self._blocking_loop
        if loop is None:
            with _LOOP_LOCK:
                if self._blocking_loop is None:
                    if self.pid is not None:
                        coro.close()
                        raise UsageError(_MIXED_BLOCKING)
                    self._blocking_loop = LoopThread("aw-sandbox-loop")
                loop = self._blocking_loop
        if loop.closed:
            coro.close()
            raise UsageError(_CLOSED)
        return loop.run(coro)

    def _refuse_blocking_owner(self) -> None:
        """For the async methods: refuse to run on a loop other than the blocking use's own."""
        owner = self._blocking_loop
        if owner is not None and asyncio.get_running_loop() is not owner.loop:
            raise UsageError(_MIXED_AWAIT)

    def start_sync(self) -> Self:
        """Blocking :meth:`start`: start the shell (the first command does it too)."""
        self._call_blocking(self.start())
        return self

    def run_sync(self, command: str, *, timeout: float = 10.0) -> CommandResult:
        """Blocking :meth:`run`."""
        return self._call_blocking(self.run(command, timeout=timeout))

    def send_keys_sync(self, action: object, *, timeout: float = 10.0) -> CommandResult:
        """Blocking :meth:`send_keys`."""
        return self._call_blocking(self.send_keys(action, timeout=timeout))

    def close_sync(self) -> None:
        """Blocking :meth:`close`, then the private loop is closed. Idempotent."""
        loop = self._blocking_loop
        if loop is not None and loop.closed:
            return
        try:
            self._call_blocking(self.close())
        finally:
            if self._blocking_loop is not None:
                self._blocking_loop.close()

    def __enter__(self) -> Self:
        return self.start_sync()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close_sync()
