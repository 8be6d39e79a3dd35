"""The one sync bridge (``aw_lookahead._sync``): a shared background loop and private loops,
and the world models' ``_sync`` twins built on it."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future

import pytest

from aw_lookahead._sync import LoopThread, run_on_own_loop, run_sync, submit
from aw_lookahead.errors import UsageError, WorldModelError
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel


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


def test_run_on_own_loop_runs_on_a_fresh_loop_and_closes_it() -> None:
    leftover = threading.Event()

    async def job() -> tuple[asyncio.AbstractEventLoop, str]:
        async def linger() -> None:
            try:
                await asyncio.Event().wait()
            finally:
                leftover.set()

        asyncio.get_running_loop().create_task(linger())
        await asyncio.sleep(0)
        return await _loop_and_thread()

    loop, thread = run_on_own_loop(job(), "test-own-loop")
    assert thread == "test-own-loop"
    assert loop.is_closed()
    assert leftover.is_set(), "what the call left running is cancelled, as asyncio.run does"
    assert loop is not run_sync(_loop_and_thread())[0]


async def test_run_on_own_loop_works_while_the_caller_runs_a_loop() -> None:
    loop, _ = run_on_own_loop(_loop_and_thread(), "test-own-loop")
    assert loop is not asyncio.get_running_loop()


# The world models' blocking twins (BaseWorldModel.predict_sync, predict_many_sync, close).


def _echo(trajectory: Trajectory, action: Action) -> str:
    return f"ran {action}"


class _Closable(FunctionWorldModel):
    closed_on: asyncio.AbstractEventLoop | None = None

    async def aclose(self) -> None:
        self.closed_on = asyncio.get_running_loop()


def test_world_model_sync_twins_from_plain_code() -> None:
    wm = _Closable(_echo)
    traj = Trajectory(domain="terminal")
    assert wm.predict_sync(traj, "ls").observation == "ran ls"
    assert [p.observation for p in wm.predict_many_sync(traj, ["a", "b"])] == ["ran a", "ran b"]
    wm.close()
    assert wm.closed_on is run_sync(_loop_and_thread())[0], "closed on the loop the twins use"


async def test_world_model_sync_twins_inside_a_running_loop() -> None:
    def fails(trajectory: Trajectory, action: Action) -> str:
        if action == "bad":
            raise WorldModelError("no answer")
        return "ok"

    wm = FunctionWorldModel(fails)
    traj = Trajectory(domain="terminal")
    assert wm.predict_sync(traj, "ls").observation == "ok"
    with pytest.raises(WorldModelError, match="no answer"):
        wm.predict_many_sync(traj, ["ls", "bad"])
    wm.close()  # no aclose: nothing to do
