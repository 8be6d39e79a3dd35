"""Blocking entry points: a sync sandbox wrapper and trajectory recording.

Both run the async core on their own :class:`~aw_lookahead._sync.LoopThread`
(the package's sync bridge), so they work from plain scripts and from code
that already runs an event loop, and the shell's pipes die with the wrapper.
"""

from __future__ import annotations

import math
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from aw_lookahead._sync import LoopThread
from aw_lookahead.errors import UsageError
from aw_lookahead.trajectory import Domain, Trajectory, Turn

from .terminal import DEFAULT_MAX_OUTPUT_BYTES, CommandResult, TerminalSandbox, observation

__all__ = ["SyncTerminalSandbox", "arecord_trajectory", "record_trajectory"]

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


async def arecord_trajectory(
    commands: Sequence[str],
    *,
    task: str | None = None,
    domain: Domain | str = Domain.TERMINAL,
    timeout: float = 10.0,  # noqa: ASYNC109
    env: Mapping[str, str] | None = None,
    root: str | Path | None = None,
    network: bool = False,
    id: str | None = None,
) -> Trajectory:
    """Run ``commands`` in order in one fresh sandbox and record what a terminal showed.

    Each turn's action is the keystroke form ``[{"keystrokes": cmd + "\\n",
    "duration": d}]`` (``d`` is the run time rounded up to whole seconds, at
    least 1.0, so quick commands give identical actions from run to run); its
    observation is :func:`observation` of the result; its metadata holds
    ``exit_code``, ``duration_s`` and ``timed_out``.
    """
    if isinstance(commands, str):
        raise UsageError("commands must be a list of command strings, not one string")
    turns: list[Turn] = []
    async with TerminalSandbox(network=network, root=root, env=env) as sb:
        for command in commands:
            result = await sb.run(command, timeout=timeout)
            duration = float(max(1, math.ceil(result.duration_s)))
            turns.append(
                Turn(
                    action=[{"keystrokes": command + "\n", "duration": duration}],
                    observation=observation(result),
                    metadata={
                        "exit_code": result.exit_code,
                        "duration_s": round(result.duration_s, 3),
                        "timed_out": result.timed_out,
                    },
                )
            )
            if not sb.alive:
                break
        isolated = sb.network_isolated
    return Trajectory(
        domain=Domain.parse(domain),
        task=task,
        turns=turns,
        id=id,
        metadata={"source": "aw_lookahead.sandbox", "network_isolated": isolated},
    )


def record_trajectory(
    commands: Sequence[str],
    *,
    task: str | None = None,
    domain: Domain | str = Domain.TERMINAL,
    timeout: float = 10.0,
    env: Mapping[str, str] | None = None,
    root: str | Path | None = None,
    network: bool = False,
    id: str | None = None,
) -> Trajectory:
    """Blocking :func:`arecord_trajectory`; safe to call while an event loop runs."""
    coro = arecord_trajectory(
        commands,
        task=task,
        domain=domain,
        timeout=timeout,
        env=env,
        root=root,
        network=network,
        id=id,
    )
    with LoopThread("aw-sandbox-record") as loop:
        return loop.run(coro)
