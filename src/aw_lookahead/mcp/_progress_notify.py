"""Progress notifications while a call waits on the world model (or the downstream server).

A client that sent a ``progressToken`` (and, like the TypeScript SDK's
``resetTimeoutOnProgress``, restarts its request timeout on each
notification) must never time out on a slow model. :func:`with_progress`
runs one call and reports progress every ``interval_s`` seconds until it
ends; without a token the SDK's ``report_progress`` is a no-op.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

__all__ = ["PROGRESS_INTERVAL_S", "reporter", "with_progress"]

T = TypeVar("T")
PROGRESS_INTERVAL_S = 2.0

Report = Callable[[float, float | None, str | None], Awaitable[None]]


async def with_progress(
    report: Report | None,
    work: Callable[[], Awaitable[T]],
    *,
    what: str = "simulating",
    interval_s: float = PROGRESS_INTERVAL_S,
) -> T:
    """Await ``work()``, calling ``report(elapsed_s, None, message)`` every ``interval_s``.

    Progress values grow strictly (elapsed seconds). A failing ``report`` (the
    client went away) stops the reports, never the work.
    """
    if report is None:
        return await work()
    done = anyio.Event()
    started = time.monotonic()

    async def beat() -> None:
        while True:
            with anyio.move_on_after(interval_s):
                await done.wait()
            if done.is_set():
                return
            elapsed = round(time.monotonic() - started, 3)
            try:
                await report(elapsed, None, f"aw-lookahead: {what} ({elapsed:.0f} s)")
            except Exception:
                return

    failure: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(beat)
        try:
            result = await work()
        except Exception as exc:  # re-raised as is below, not wrapped in an ExceptionGroup
            failure = exc
        finally:
            done.set()
    if failure is not None:
        raise failure
    return result


def reporter(ctx: object) -> Report | None:
    """The request's progress reporter (``None`` outside a request)."""
    session = getattr(ctx, "session", None)
    report = getattr(session, "report_progress", None)
    return report if callable(report) else None
