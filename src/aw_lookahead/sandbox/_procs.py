"""Process helpers for the sandbox: find a shell's command processes, kill them, probe unshare.

Where this machine allows it, a session lives in its own cgroup leaf
(:mod:`._cgroup`) and closing it kills the whole leaf, whatever its processes
did. Besides (and where there is no leaf, instead), every process of a
session carries the environment variable :data:`MARKER_VAR` with the
session's random token. A child that leaves the shell's process tree and
group (``setsid``, ``nohup`` in a subshell, a double fork) still inherits it,
so :func:`kill_marked` finds it by scanning ``/proc/<pid>/environ``; without
a leaf, a process that drops the marker (``env -u``, ``env -i``) and leaves
the tree escapes. This is containment for honest commands, not a security
boundary.

Also how a live session is stopped: :func:`stop_command` (one command,
the shell kept) and :func:`kill_shell` (the whole session), and
:func:`kill_session`, the last-resort cleanup a sandbox's finalizer runs.
Linux only: processes are found through ``/proc``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from pathlib import Path

from ._cgroup import kill_leaf, remove_leaf

__all__ = [
    "MARKER_VAR",
    "command_pids",
    "isolation_argv",
    "kill_marked",
    "kill_session",
    "kill_shell",
    "marked_pids",
    "network_isolation_available",
    "signal_pids",
    "stop_command",
]

MARKER_VAR = "AW_SANDBOX_SESSION"
"""The environment variable that tags every process of one sandbox session."""

_KILL_ROUNDS = 50
_GRACE_S = 1.0
_REPORT_S = 15.0
_BUSY_PROBE_S = 0.5
_UNSHARE_ARGV = ("unshare", "--net", "--map-root-user", "--")
_probe_cache: dict[str, bool] = {}


def _stat_fields(proc_dir: Path) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first); None if gone."""
    try:
        return (proc_dir / "stat").read_bytes().rpartition(b")")[2].split()
    except OSError:
        return None


def _proc_table() -> dict[int, tuple[int, int]]:
    """``pid -> (ppid, pgrp)`` for every process we can read."""
    table: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields is None:
            continue
        table[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return table


def command_pids(shell_pid: int) -> list[int]:
    """Processes started by the shell: its descendants and the rest of its process group.

    The shell itself is excluded, so signalling the result stops the running
    command while the session (cwd, variables) survives.
    """
    table = _proc_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = [shell_pid]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    found.update(pid for pid, (_, pgrp) in table.items() if pgrp == shell_pid)
    found.discard(shell_pid)
    return sorted(found)


def marked_pids(token: str) -> list[int]:
    """Live processes whose initial environment holds ``MARKER_VAR=token`` (ours excluded)."""
    needle = f"{MARKER_VAR}={token}".encode()
    me = os.getpid()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return sorted(found)


def kill_marked(token: str) -> int:
    """SIGKILL every process tagged with ``token`` until a scan finds none; returns the count.

    Rescanning catches children forked between a scan and its kill; the
    number of rounds is bounded, so a fork bomb cannot hold the caller.
    """
    killed: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        pids = marked_pids(token)
        if not pids:
            break
        signal_pids(pids, signal.SIGKILL)
        killed.update(pids)
    return len(killed)


def signal_pids(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


async def network_isolation_available() -> bool:
    """Whether ``unshare --net --map-root-user`` works here; probed once per process."""
    if "unshare" not in _probe_cache:
        try:
            proc = await asyncio.create_subprocess_exec(
                *_UNSHARE_ARGV,
                "true",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
        except OSError:
            _probe_cache["unshare"] = False
        else:
            try:
                _probe_cache["unshare"] = await asyncio.wait_for(proc.wait(), 10) == 0
            except TimeoutError:
                proc.kill()
                await proc.wait()
                _probe_cache["unshare"] = False
    return _probe_cache["unshare"]


def isolation_argv() -> tuple[str, ...]:
    return _UNSHARE_ARGV


def kill_session(state: dict[str, object]) -> None:
    """Last-resort cleanup for the finalizer: kill the leaf, group and tagged processes; remove."""
    leaf = state.get("cgroup")
    if isinstance(leaf, Path):
        remove_leaf(leaf)
    pgid = state.get("pgid")
    if isinstance(pgid, int):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    token = state.get("marker")
    if isinstance(token, str):
        kill_marked(token)
    owned = state.get("owned_dir")
    if isinstance(owned, str):
        shutil.rmtree(owned, ignore_errors=True)


async def _finished(task: asyncio.Task[None], seconds: float) -> bool:
    done, _ = await asyncio.wait({task}, timeout=seconds)
    return bool(done)


async def stop_command(shell_pid: int, task: asyncio.Task[None], sig: signal.Signals) -> bool:
    """Signal the shell's command processes until ``task`` (which reads the command's report) ends.

    Returns False when it still has not ended: the shell itself is stuck and
    the caller must restart it. ``task`` is left running either way.
    """
    # A signal can land before a loaded machine has even started the command (the
    # subshell has not exec'd yet), so a soft signal is sent up to three times.
    attempts = (sig, sig, sig, signal.SIGKILL) if sig != signal.SIGKILL else (sig,)
    for attempt in attempts:
        pids = command_pids(shell_pid)
        if pids:
            signal_pids(pids, attempt)
            if await _finished(task, _GRACE_S):
                return True
        if not command_pids(shell_pid):
            # The command is gone; only the shell's report is missing, which on a busy
            # machine can take longer than the grace period: wait for it, not for a kill,
            # unless the shell itself is busy (a builtin loop that will never report).
            return await _report_unless_busy(shell_pid, task)
    return False


def _cpu_ticks(pid: int) -> int | None:
    """User plus system CPU time of ``pid`` in clock ticks; None where /proc cannot tell."""
    fields = _stat_fields(Path(f"/proc/{pid}"))
    try:
        return int(fields[11]) + int(fields[12]) if fields is not None else None
    except (IndexError, ValueError):
        return None


async def _report_unless_busy(shell_pid: int, task: asyncio.Task[None]) -> bool:
    """Wait up to ``_REPORT_S`` for the report; False as soon as the shell is seen spinning.

    A shell that is about to report uses next to no CPU; one running a builtin
    loop uses a core (or its share of a loaded one), so a fifth of the
    interval's ticks tells them apart within ``_BUSY_PROBE_S``.
    """
    ticks_per_s = os.sysconf("SC_CLK_TCK")
    deadline = asyncio.get_running_loop().time() + _REPORT_S
    before = _cpu_ticks(shell_pid)
    while True:
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            return False
        if await _finished(task, min(_BUSY_PROBE_S, left)):
            return True
        after = _cpu_ticks(shell_pid)
        busy = 0.2 * _BUSY_PROBE_S * ticks_per_s
        if before is not None and after is not None and after - before >= busy:
            return False
        before = after


async def kill_shell(
    proc: asyncio.subprocess.Process, token: str, leaf: Path | None = None
) -> None:
    """Kill a session's shell, its command processes and every process tagged ``token``.

    With the session's cgroup ``leaf``, everything in it is killed first (the
    leaf stays, for a restarted shell). Returns within about two grace periods
    even when an untagged process (``env -i``) still holds the shell's output pipe.
    """
    if leaf is not None:
        kill_leaf(leaf)
    leftovers = command_pids(proc.pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    signal_pids(leftovers, signal.SIGKILL)
    kill_marked(token)
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), _GRACE_S)
    except TimeoutError:
        # The shell is dead, but an untagged process (env -i) still holds its
        # output pipe and asyncio waits for the pipe too: stop listening to it.
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()
        await proc.wait()
    if proc.stdout is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.stdout.read(), _GRACE_S)
