"""The deprecated blocking wrapper class, kept for one release.

``aw_lookahead.sandbox.SyncTerminalSandbox`` resolves here with a
:class:`DeprecationWarning`; write ``with TerminalSandbox() as sb:`` and its
``_sync`` methods instead (:mod:`aw_lookahead.sandbox._blocking`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._result import CommandResult
from .terminal import TerminalSandbox

__all__ = ["SyncTerminalSandbox"]


class SyncTerminalSandbox:
    """Deprecated: use ``with TerminalSandbox() as sb:`` and its ``_sync`` methods.

    Kept for one release (``aw_lookahead.sandbox.SyncTerminalSandbox`` warns);
    it starts a :class:`TerminalSandbox` in blocking use and forwards to it.
    """

    def __init__(self, **options: Any) -> None:
        """``options`` are :class:`TerminalSandbox`'s (``network``, ``root``, ``env``,
        ``max_output_bytes``)."""
        self.sandbox = TerminalSandbox(**options)
        try:
            self.sandbox.start_sync()
        except BaseException:
            self.sandbox.close_sync()
            raise

    @property
    def path(self) -> Path:
        return self.sandbox.path

    @property
    def network_isolated(self) -> bool:
        return self.sandbox.network_isolated

    def write_file(self, rel: str | Path, text: str) -> Path:
        return self.sandbox.write_file(rel, text)

    def run(self, command: str, *, timeout: float = 10.0) -> CommandResult:
        return self.sandbox.run_sync(command, timeout=timeout)

    def send_keys(self, action: object, *, timeout: float = 10.0) -> CommandResult:
        return self.sandbox.send_keys_sync(action, timeout=timeout)

    def close(self) -> None:
        """Close the sandbox and its loop. Idempotent."""
        self.sandbox.close_sync()

    def __enter__(self) -> SyncTerminalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
