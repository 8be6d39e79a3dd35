"""TerminalSandbox in blocking use: the ``_sync`` methods, the ``with`` form, the refusal to
mix blocking and async use on one sandbox. Real bash, no mocks."""

from __future__ import annotations

import asyncio
import threading

import pytest

from aw_lookahead.errors import UsageError
from aw_lookahead.sandbox import TerminalSandbox, observation, record_trajectory_sync


def test_blocking_use_from_plain_code() -> None:
    with TerminalSandbox() as sb:
        assert sb.pid is not None, "`with` starts the shell"
        assert sb.run_sync("mkdir -p sub && cd sub && x=7").exit_code == 0
        assert sb.run_sync("echo $x; basename $PWD").output == "7\nsub\n"
        result = sb.send_keys_sync([{"keystrokes": "echo a\n", "duration": 0.1}])
        assert observation(result) == "$ echo a\na\n"
        assert sb.run_sync("sleep 5", timeout=0.5).timed_out
        root = sb.path
    assert not sb.alive
    assert not root.exists()


async def test_blocking_use_inside_a_running_event_loop() -> None:
    caller = asyncio.get_running_loop()
    with TerminalSandbox() as sb:
        assert sb.run_sync("echo $((6 * 7))").output == "42\n"
        assert sb._blocking_loop is not None
        assert sb._blocking_loop.loop is not caller, "the shell lives on the sandbox's own loop"
    assert record_trajectory_sync(["echo hi"], id="t").turns[0].observation == "$ echo hi\nhi\n"


def test_start_sync_and_close_sync_without_with() -> None:
    sb = TerminalSandbox().start_sync()
    assert sb.run_sync("echo started").output == "started\n"
    sb.close_sync()
    sb.close_sync()  # idempotent
    with pytest.raises(UsageError, match="closed; create a new one"):
        sb.run_sync("echo late")


def test_blocking_calls_from_several_threads_run_one_at_a_time() -> None:
    outputs: list[str] = []
    with TerminalSandbox() as sb:

        def work(k: int) -> None:
            outputs.append(sb.run_sync(f"echo {k}").output)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert sorted(outputs) == [f"{k}\n" for k in range(4)]


async def test_a_sandbox_started_with_await_refuses_blocking_calls() -> None:
    async with TerminalSandbox() as sb:
        with pytest.raises(UsageError, match=r"started with `await`.*separate sandbox"):
            sb.run_sync("echo no")
        with pytest.raises(UsageError, match="started with `await`"):
            sb.close_sync()
        assert (await sb.run("echo still fine")).output == "still fine\n"
    assert sb._blocking_loop is None, "no loop was made for the refused calls"


async def test_a_sandbox_in_blocking_use_refuses_await() -> None:
    with TerminalSandbox() as sb:
        with pytest.raises(UsageError, match=r"in blocking use.*`_sync` methods"):
            await sb.run("echo no")
        with pytest.raises(UsageError, match="in blocking use"):
            await sb.send_keys("echo no")
        with pytest.raises(UsageError, match="in blocking use"):
            async with sb:
                pass
        assert sb.run_sync("echo still fine").output == "still fine\n"


async def test_a_fresh_sandbox_used_blocking_first_refuses_await_too() -> None:
    sb = TerminalSandbox()
    try:
        assert sb.run_sync("echo first").output == "first\n"  # starts the shell implicitly
        with pytest.raises(UsageError, match="in blocking use"):
            await sb.run("echo no")
    finally:
        sb.close_sync()
