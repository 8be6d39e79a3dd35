"""Process helpers for the sandbox: find a shell's command processes, kill them, probe unshare.

Also :func:`kill_session`, the last-resort cleanup a sandbox's finalizer runs.
Linux only: processes are found through ``/proc``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from pathlib import Path

__all__ = [
    "command_pids",
    "isolation_argv",
    "kill_session",
    "network_isolation_available",
    "signal_pids",
]

_UNSHARE_ARGV = ("unshare", "--net", "--map-root-user", "--")
_probe_cache: dict[str, bool] = {}


def _proc_table() -> dict[int, tuple[int, int]]:
    """``pid -> (ppid, pgrp)`` for every process we can read."""
    table: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        fields = stat.rpartition(b")")[2].split()
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
    """Last-resort cleanup used by the finalizer: kill the group, remove the directory."""
    pgid = state.get("pgid")
    if isinstance(pgid, int):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    owned = state.get("owned_dir")
    if isinstance(owned, str):
        shutil.rmtree(owned, ignore_errors=True)
