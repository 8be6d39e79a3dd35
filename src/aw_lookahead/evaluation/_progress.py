"""A rich progress bar on stderr that callers advance by one per finished item."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["progress_bar"]


@contextmanager
def progress_bar(label: str, total: int, *, enabled: bool = True) -> Iterator[Callable[[], None]]:
    """Yield ``advance()``; draws nothing when disabled or when stderr is not a terminal."""
    if not enabled or total == 0:
        yield lambda: None
        return
    console = Console(file=sys.stderr)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)
