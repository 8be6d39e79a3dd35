"""The blocking twin of :class:`~aw_lookahead.sandbox.TerminalSandbox`.

It runs the async sandbox on its own :class:`~aw_lookahead._sync.LoopThread`
(the package's sync bridge), so it works from plain scripts and from code
that already runs an event loop, and the shell's pipes die with the wrapper.
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from aw_lookahead._sync import LoopThread
from aw_lookahead.errors import UsageError

from .terminal import DEFAULT_MAX_OUTPUT_BYTES, CommandResult, TerminalSandbox

__all__ = ["SyncTerminalSandbox"]

T = TypeVar("T")


class SyncTerminalSandbox:
    """Blocking twin of :class:`TerminalSandbox`; use as a context manager."""

    def __init__(
        self,
        *,
        network: bool = False,
        root: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        self._loop = LoopThread("aw-sandbox-loop")
        self.sandbox = TerminalSandbox(
            network=network, root=root, env=env, max_output_bytes=max_output_bytes
        )
        try:
            self._call(self.sandbox.start())
        except BaseException:
            self.close()
            raise

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop.closed:
            coro.close()
            raise UsageError("this SyncTerminalSandbox is closed; create a new one")
        return self._loop.run(coro)

    @property
    def path(self) -> Path:
        return self.sandbox.path

    @property
    def network_isolated(self) -> bool:
        return self.sandbox.network_isolated

    def write_file(self, rel: str | Path, text: str) -> Path:
        return self.sandbox.write_file(rel, text)

    def run(self, command: str, *, timeout: float = 10.0) -> CommandResult:
        return self._call(self.sandbox.run(command, timeout=timeout))

    def send_keys(self, action: object, *, timeout: float = 10.0) -> CommandResult:
        return self._call(self.sandbox.send_keys(action, timeout=timeout))

    def close(self) -> None:
        """Close the sandbox, then stop and close the private loop. Idempotent."""
        if self._loop.closed:
            return
        try:
            self._call(self.sandbox.close())
        finally:
            self._loop.close()

    def __enter__(self) -> SyncTerminalSandbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
