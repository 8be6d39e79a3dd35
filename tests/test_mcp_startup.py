"""Starting the proxy: whatever it opened before a failure is closed before the error leaves.

:meth:`LookaheadProxy.__aenter__` opens the downstream (a supervised server
process), waits for it to answer, then opens its own task group. These tests
make the step after the first resource fail for real - a downstream command
that exits at once, and a caller that gives up while a silent downstream
never answers - and check that the downstream was closed: its process is
gone and its supervisor will not start it again.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from aw_lookahead.errors import DownstreamError
from aw_lookahead.mcp import Downstream, LookaheadProxy, ProxyConfig, ProxyMode
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel

pytestmark = pytest.mark.integration

DEADLINE_S = 60.0  # process start-up and shutdown on a busy machine; the point is "it happens"

FAILS_AT_ONCE = """
import os, sys
with open(sys.argv[1], "a") as f:
    f.write(f"{os.getpid()}\\n")
print("boom: the server's config file is missing", file=sys.stderr)
sys.exit(3)
"""

NEVER_ANSWERS = """
import os, sys, time
with open(sys.argv[1], "a") as f:
    f.write(f"{os.getpid()}\\n")
time.sleep(3600)  # reads nothing, answers nothing, ignores a closed stdin
"""


def _model(trajectory: Trajectory, action: Action) -> str:
    return "ok"


def _proxy(script: Path, ledger: Path, config: ProxyConfig | None = None) -> LookaheadProxy:
    downstream = Downstream([sys.executable, str(script), str(ledger)], start_timeout_s=120)
    return LookaheadProxy(downstream, FunctionWorldModel(_model), config)


def _pids(ledger: Path) -> list[int]:
    return [int(line) for line in ledger.read_text().split()] if ledger.exists() else []


def _running(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


async def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {DEADLINE_S:g} s: {what}")
        await anyio.sleep(0.05)


async def test_a_downstream_that_fails_to_start_is_closed_before_the_error(
    tmp_path: Path,
) -> None:
    script, ledger = tmp_path / "server.py", tmp_path / "ledger"
    script.write_text(FAILS_AT_ONCE)
    config = ProxyConfig(mode=ProxyMode.SHADOW, shadow_log=tmp_path / "shadow.jsonl")
    proxy = _proxy(script, ledger, config)
    with pytest.raises(DownstreamError) as failure:
        async with proxy:
            pytest.fail("the proxy started although its downstream could not")
    assert "did not start" in str(failure.value)
    assert "config file is missing" in str(failure.value)
    assert proxy.downstream.closed  # the supervisor stopped: no restart loop left behind
    pids = _pids(ledger)
    assert pids
    await _wait_for(lambda: not any(_running(p) for p in pids), f"processes {pids} exit")


async def test_a_start_given_up_on_stops_the_silent_downstream(tmp_path: Path) -> None:
    script, ledger = tmp_path / "server.py", tmp_path / "ledger"
    script.write_text(NEVER_ANSWERS)
    proxy = _proxy(script, ledger)
    entered = False
    giving_up = anyio.CancelScope()

    async def start() -> None:
        nonlocal entered
        with giving_up:
            async with proxy:
                entered = True

    async with anyio.create_task_group() as tg:
        tg.start_soon(start)
        await _wait_for(lambda: bool(_pids(ledger)), "the downstream process starts")
        (pid,) = _pids(ledger)
        assert _running(pid)
        giving_up.cancel()  # the caller's own timeout, while the downstream stays silent
    assert not entered
    assert proxy.downstream.closed
    await _wait_for(lambda: not _running(pid), f"the silent downstream (pid {pid}) is stopped")
    assert _pids(ledger) == [pid]  # and not started again
