"""The bash process under a :class:`~aw_lookahead.sandbox.TerminalSandbox`, and the cycle of
one command through it: spawn the shell, begin a command, collect its output, wait, stop
(restarting a stuck shell), settle it into a :class:`~._result.CommandResult`.

:class:`BashProcess` is the sandbox's base class: the session's state is the
sandbox's (set in its ``__init__``), declared here for the type checker. Kept
apart from :mod:`.terminal` so the session's public face (lifecycle, ``run``,
``send_keys``) reads apart from the process mechanics beneath it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from aw_lookahead.errors import DownstreamError

from ._cgroup import enter_leaf
from ._procs import kill_shell, stop_command
from ._result import CommandResult, ensure_newline
from ._shell import (
    BOOTSTRAP,
    Running,
    clean_output,
    collect,
    command_script,
    shell_argv,
    shell_environment,
)

__all__ = ["BashProcess"]


class BashProcess:
    """The shell process of a session and the cycle of each command (see the module docstring)."""

    network_isolated: bool
    cleanup: Literal["cgroup", "marker"] | None
    max_output_bytes: int
    _extra_env: dict[str, str]
    _root: Path | None
    _cwd: Path | None
    _proc: asyncio.subprocess.Process | None
    _leaf: Path | None
    _carry: bytes
    _serial: int
    _token: str
    _ended: bool
    _state: dict[str, object]

    if TYPE_CHECKING:
        # What the sandbox provides; declared here for the type checker only.
        @property
        def path(self) -> Path: ...

    async def _spawn(self, cwd: Path) -> None:
        assert self._root is not None
        self._proc = await asyncio.create_subprocess_exec(
            *shell_argv(isolated=self.network_isolated),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=cwd,
            env=shell_environment(self._root, self._extra_env, self._token),
            start_new_session=True,
        )
        self._state["pgid"] = self._proc.pid
        # Joining a cgroup waits for the kernel (ms): done while bash starts, before any fork.
        leaf, pid = self._leaf, self._proc.pid
        entering = asyncio.create_task(asyncio.to_thread(enter_leaf, leaf, pid)) if leaf else None
        self._carry = b""
        self._write(BOOTSTRAP)
        banner = await self._begin("")
        started = await self._wait(banner, 10.0)
        if entering is not None and not await entering:
            self._state["cgroup"] = self._leaf = None
        self.cleanup = "cgroup" if self._leaf is not None else "marker"
        if not started or banner.eof:
            await kill_shell(self._proc, self._token, self._leaf)
            raise DownstreamError(
                f"bash did not start in {cwd}: {banner.out.decode(errors='replace')!r}; "
                "check that bash is installed (and unshare, or pass network=True)"
            )

    def _write(self, data: bytes) -> None:
        assert self._proc is not None
        assert self._proc.stdin is not None
        self._proc.stdin.write(data)

    async def _begin(self, command: str) -> Running:
        self._serial += 1
        token = f"__AW_END_{self._token}_{self._serial}__"
        running = Running(
            command=command,
            token=token.encode(),
            started=time.monotonic(),
            cap=self.max_output_bytes,
        )
        script = command_script(command, token)
        try:
            self._write(script.encode())
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise DownstreamError("the shell exited unexpectedly; start a new sandbox") from exc
        running.task = asyncio.create_task(self._collect(running))
        return running

    async def _collect(self, running: Running) -> None:
        assert self._proc is not None
        assert self._proc.stdout is not None
        carry, self._carry = self._carry, b""
        self._carry, cwd = await collect(self._proc.stdout, running, carry)
        if cwd is not None:
            self._cwd = cwd

    async def _wait(self, running: Running, seconds: float) -> bool:
        assert running.task is not None
        done, _ = await asyncio.wait({running.task}, timeout=seconds)
        return bool(done)

    async def _stop(self, running: Running, sig: signal.Signals) -> bool:
        """Stop the running command; returns False when the shell had to be restarted."""
        assert self._proc is not None
        assert running.task is not None
        if await stop_command(self._proc.pid, running.task, sig):
            return True
        running.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running.task
        await kill_shell(self._proc, self._token, self._leaf)
        await self._spawn(self._cwd if self._cwd and self._cwd.is_dir() else self.path)
        return False

    async def _settle(self, running: Running, seconds: float) -> CommandResult:
        if await self._wait(running, seconds):
            return await self._result(running)
        stopped = await self._stop(running, signal.SIGKILL)
        return await self._result(running, timed_out=True, stopped=stopped)

    async def _interrupt(self, running: Running) -> CommandResult:
        if running.task is not None and running.task.done():
            return await self._result(running)
        stopped = await self._stop(running, signal.SIGINT)
        result = await self._result(running, stopped=stopped)
        result.output = ensure_newline(result.output) + "^C\n"
        return result

    async def _end_session(self, seconds: float) -> CommandResult:
        assert self._proc is not None
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        try:
            code = await asyncio.wait_for(self._proc.wait(), seconds)
        except TimeoutError:
            code = None
        self._ended = True
        return CommandResult(command="", output="exit\n", exit_code=code)

    async def _result(
        self, running: Running, *, timed_out: bool = False, stopped: bool = True
    ) -> CommandResult:
        exit_code = running.exit_code if stopped and not timed_out else None
        if running.eof and self._proc is not None:
            self._ended = True
            exit_code = await self._proc.wait()
        return CommandResult(
            command=running.command,
            output=clean_output(running.out),
            exit_code=exit_code,
            timed_out=timed_out,
            duration_s=round(time.monotonic() - running.started, 6),
            truncated=running.truncated,
        )
