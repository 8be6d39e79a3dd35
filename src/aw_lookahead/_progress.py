"""Progress on stderr for long work: one module for every verb and library loop.

Two forms, because callers differ in what they can draw: :class:`ProgressBar`,
a rich bar advanced by one per finished item (evaluation, training), and
:func:`line_progress`, a ``(done, total)`` callback that prints about twenty
plain lines over a run (data generation, calibration), which logs and CI keep
readable. MCP progress *notifications* to a client are a protocol matter and
live in :mod:`aw_lookahead.mcp`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

__all__ = ["ProgressBar", "ProgressCallback", "line_progress"]

ProgressCallback = Callable[[int, int], None]
"""``progress(done, total)``, called after each finished item."""


class ProgressBar:
    """A rich bar on stderr: ``label``, bar, done/total, elapsed, remaining.

    Disabled (draws nothing, costs nothing) when ``enabled`` is false or
    ``total`` is 0, and with ``terminal_only`` when stderr is not a terminal.
    ``fields`` are extra columns shown after the count (``{"loss": "-"}``) and
    updated by :meth:`advance`. Use it as a context manager or call
    :meth:`close`.
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        enabled: bool = True,
        start: int = 0,
        fields: dict[str, str] | None = None,
        terminal_only: bool = True,
    ) -> None:
        self._bar: Any = None
        self._task: Any = None
        if not enabled or total == 0:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = Console(file=sys.stderr)
        extra = [TextColumn(f"{name} {{task.fields[{name}]}}") for name in fields or {}]
        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            *extra,
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=terminal_only and not console.is_terminal,
        )
        self._bar.start()
        self._task = self._bar.add_task(label, total=total, completed=start, **(fields or {}))

    def advance(self, **fields: str) -> None:
        """One more item done; ``fields`` update the extra columns."""
        if self._bar is not None:
            self._bar.update(self._task, advance=1, **fields)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def line_progress(label: str, unit: str, *, lines: int = 20) -> ProgressCallback:
    """A ``(done, total)`` callback printing ``label: done/total unit (rate/s)`` about
    ``lines`` times over a run, and always at the end."""
    started = time.monotonic()

    def report(done: int, total: int) -> None:
        step = max(1, total // lines)
        if done % step == 0 or done == total:
            rate = done / max(time.monotonic() - started, 1e-9)
            print(f"{label}: {done}/{total} {unit} ({rate:.1f}/s)", file=sys.stderr, flush=True)

    return report
