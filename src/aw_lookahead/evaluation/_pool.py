"""A bounded worker pool that appends each finished record to a JSONL file at once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from aw_lookahead._progress import ProgressBar
from aw_lookahead.trajectory import JsonlWriter

T = TypeVar("T")

__all__ = ["write_concurrently"]


async def write_concurrently(
    items: Sequence[T],
    handle: Callable[[T], Awaitable[dict[str, Any]]],
    *,
    path: Path,
    append: bool,
    label: str,
    concurrency: int,
    progress: bool,
) -> tuple[int, int, float]:
    """Run ``handle`` on every item, at most ``concurrency`` at a time.

    Each record is written the moment it is ready (whole lines, so a killed
    run keeps everything finished so far). Returns ``(ok, not_ok, wall_s)``,
    counting records by ``status == "ok"``. Memory stays flat: workers pull
    items from a queue instead of one task per item.
    """
    queue: asyncio.Queue[T] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)
    counts = {"ok": 0, "other": 0}
    started = time.perf_counter()
    with (
        JsonlWriter(path, append=append) as writer,
        ProgressBar(label, len(items), enabled=progress) as bar,
    ):

        async def worker() -> None:
            while True:
                try:
                    item = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                record = await handle(item)
                writer.write(record)
                counts["ok" if record.get("status") == "ok" else "other"] += 1
                bar.advance()

        await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(items))))))
    return counts["ok"], counts["other"], time.perf_counter() - started
