"""The one sync bridge (``aw_lookahead._sync``): a shared background loop and private loops."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future

import pytest

from aw_lookahead._sync import LoopThread, run_sync, submit
from aw_lookahead.errors import UsageError


async def _loop_and_thread() -> tuple[asyncio.AbstractEventLoop, str]:
    return asyncio.get_running_loop(), threading.current_thread().name


def test_run_sync_uses_one_shared_loop_off_the_caller_thread() -> None:
    first_loop, first_thread = run_sync(_loop_and_thread())
    second_loop, _ = run_sync(_loop_and_thread())
    assert first_loop is second_loop
    assert first_thread != threading.current_thread().name


async def test_run_sync_works_while_the_caller_runs_a_loop() -> None:
    caller = asyncio.get_running_loop()
    loop, _ = run_sync(_loop_and_thread())
    assert loop is not caller


def test_submit_returns_a_concurrent_future_on_the_shared_loop() -> None:
    future = submit(_loop_and_thread())
    assert isinstance(future, Future)
    loop, _ = future.result(timeout=60)
    assert loop is run_sync(_loop_and_thread())[0]


def test_blocking_from_the_loop_thread_raises_instead_of_hanging() -> None:
    async def inner() -> int:
        return 1

    async def outer() -> int:
        return run_sync(inner())  # a blocking call made on the loop it would wait for

    with pytest.raises(UsageError, match="await the async method instead"):
        run_sync(outer(), timeout=60)


def test_private_loop_closes_cleanly_and_refuses_work_after() -> None:
    cancelled = threading.Event()
    started = threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    with LoopThread("test-loop") as loop:
        assert loop.run(_loop_and_thread())[1] == "test-loop"
        pending = loop.submit(forever())
        assert started.wait(60)
    assert loop.closed
    assert cancelled.is_set()
    assert pending.cancelled()
    loop.close()  # idempotent

    async def late() -> None:
        raise AssertionError("must not run")

    with pytest.raises(UsageError, match="closed"):
        loop.submit(late())
